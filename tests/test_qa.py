"""explorer.tasks.qa: extractive QA equals transformers' SQuAD post-processing, windows, bad input, threads."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import resolve
from explorer.tasks import qa
from tests.tiny_models import save_tiny

CONTEXT = ("The Eiffel Tower is a wrought-iron lattice tower in Paris. It was built from 1887 to 1889 "
           "by the company of Gustave Eiffel for the World's Fair. 🙂 مرحبا <b>tags</b> stay text.")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("qa")
    return {kind: save_tiny(kind, root / kind) for kind in ("bart", "distilbert-qa")}


def _reference(loaded, enc, w: int, max_len: int):
    """The SQuAD post-processing transformers ships (select_starts_ends), as the old QA pipeline used it."""
    from transformers.pipelines.document_question_answering import select_starts_ends

    from explorer.runtime.offload import input_device

    names = [n for n in loaded.tokenizer.model_input_names if n in enc]
    with torch.inference_mode():
        out = loaded.model(**{n: enc[n][w : w + 1].to(input_device(loaded.model)) for n in names})
    p_mask = np.array([[s != 1 for s in enc.sequence_ids(w)]], dtype=np.int64)
    p_mask[0, 0] = 0  # [CLS] stays a candidate for "no answer"
    start, end = (x.float().cpu().numpy() for x in (out.start_logits, out.end_logits))
    starts, ends, scores, _ = select_starts_ends(start, end, p_mask,
                                                 enc["attention_mask"][w : w + 1].numpy(), max_answer_len=max_len)
    return int(starts[0]), int(ends[0]), float(scores[0])


def test_qa_equals_reference_post_processing_and_maps_characters(tiny) -> None:
    # float32 on the CPU: scores held to 1e-4 on a near-uniform random head (tests/gpu/test_qa.py: per device)
    loaded = load_model(resolve(str(tiny["distilbert-qa"])), "question-answering", device="cpu")
    res = qa.answer(loaded, "When was it built?", CONTEXT, max_answer_len=7)
    enc = qa.qa_windows(loaded.tokenizer, "When was it built?", CONTEXT, qa.window_length(loaded))
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
    loaded = load_model(resolve(str(tiny["distilbert-qa"])), "question-answering", device="cpu")  # 128-token windows
    context = " ".join(f"Sentence {i} says the tower is {i} metres tall." for i in range(60))
    res = qa.answer(loaded, "How tall is the tower?", context)
    assert res.n_windows > 1 and "windows" in res.notices[0].text and res.notices[0].kind == "truncated"
    enc = qa.qa_windows(loaded.tokenizer, "How tall is the tower?", context, qa.window_length(loaded))
    best = max(_reference(loaded, enc, w, 30)[2] for w in range(res.n_windows))
    assert res.score == pytest.approx(best, rel=1e-4)
    assert res.answer == context[res.start_char : res.end_char]


@pytest.mark.parametrize("question, context, needle", [
    ("", CONTEXT, "question is empty"), ("   ", CONTEXT, "question is empty"),
    ("Why?", "", "context is empty"), ("Why?", " \n ", "context is empty"),
    ("Why?", "x" * 50_000, "limit is 20,000"), ("q" * 1_500, CONTEXT, "limit is 1,000. Ask it in a sentence or two"),
    ("why " * 200, CONTEXT, "no room left"),
])
def test_qa_refuses_bad_input(tiny, question: str, context: str, needle: str) -> None:
    loaded = load_model(resolve(str(tiny["distilbert-qa"])), "question-answering")
    with pytest.raises(ExplorerError, match=needle):
        qa.answer(loaded, question, context)


def test_qa_roberta_tokenizer_offsets(tmp_path) -> None:
    """RoBERTa: byte-level BPE, question and context separated by </s></s>; offsets must still map back."""
    import transformers as tf

    from explorer.runtime.tokenizers import roberta_tokenizer
    from tests.tiny_models import SMALL

    tok = roberta_tokenizer()
    cfg = tf.RobertaConfig(vocab_size=len(tok), **{**SMALL, "max_position_embeddings": 130},
                           pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    torch.manual_seed(0)
    tf.RobertaForQuestionAnswering(cfg).eval().save_pretrained(tmp_path / "rqa")
    tok.save_pretrained(tmp_path / "rqa")
    loaded = load_model(resolve(str(tmp_path / "rqa")), "question-answering")
    res = qa.answer(loaded, "Who built it?", CONTEXT, max_answer_len=5)
    assert res.answer == CONTEXT[res.start_char : res.end_char] and res.answer.strip()
    assert all(CONTEXT[a:b] == t for t, (a, b) in zip(res.tokens, res.offsets, strict=True))
    assert "</s>" not in res.tokens and res.tokens[0].startswith("The")


def test_qa_needs_a_qa_head(tiny) -> None:
    with pytest.raises(ExplorerError, match="question-answering head"):
        qa.answer(load_model(resolve(str(tiny["bart"])), "seq2seq"), "Why?", CONTEXT)


def test_best_span_respects_order_length_and_mask() -> None:
    start = torch.tensor([0.0, 0.1, 0.6, 0.3])
    end = torch.tensor([0.0, 0.7, 0.1, 0.2])
    allowed = torch.tensor([False, True, True, True])
    assert qa.best_span(start, end, allowed, 5)[:2] == (2, 3)  # end before start is not allowed
    assert qa.best_span(start, end, allowed, 1)[:2] == (1, 1)  # length 1 only: 0.1 * 0.7 wins
    assert qa.best_span(start, end, torch.tensor([False, True, False, False]), 5)[:2] == (1, 1)


def test_concurrent_questions_get_their_own_answers(tiny) -> None:
    from concurrent.futures import ThreadPoolExecutor

    loaded = load_model(resolve(str(tiny["distilbert-qa"])), "question-answering")
    questions = ["When was it built?", "Who designed it?", "Where is it?", "What is it made of?"]
    expected = {q: qa.answer(loaded, q, CONTEXT).to_dict() for q in questions}
    with ThreadPoolExecutor(4) as pool:  # sessions share one cached model
        got = list(pool.map(lambda q: (q, qa.answer(loaded, q, CONTEXT).to_dict()), questions * 3))
    for q, res in got:
        assert res["question"] == q
        assert (res["start_char"], res["end_char"]) == (expected[q]["start_char"], expected[q]["end_char"])
        assert res["score"] == pytest.approx(expected[q]["score"], rel=1e-4)


def test_ask_checks_input_before_loading_and_random_mode_maps_hub_ids(monkeypatch) -> None:
    with pytest.raises(ExplorerError, match="question is empty"):
        qa.ask(resolve("/no/such/dir"), "", CONTEXT)  # refused before the missing directory is noticed
    asked = []
    monkeypatch.setattr("explorer.runtime.loading.load_model",
                        lambda ref, task, **kw: asked.append((ref.spec, ref.random_weights, task, kw)))
    qa.load(qa.model_ref("deepset/roberta-base-squad2", random_weights=True))
    assert asked == [("roberta-base", True, "question-answering",
                      {"device": None, "dtype": None, "purpose": "Question answering"})]


def test_window_length_takes_roberta_offset_off() -> None:
    from types import SimpleNamespace

    cfg = SimpleNamespace(model_type="roberta", max_position_embeddings=130, pad_token_id=1)
    loaded = SimpleNamespace(model=SimpleNamespace(config=cfg), tokenizer=SimpleNamespace(model_max_length=512))
    assert qa.window_length(loaded) == 128
    cfg.model_type = "bert"
    assert qa.window_length(loaded) == 130


def test_a_catalog_decoder_answers_generatively(monkeypatch, tmp_path) -> None:
    from tests.tiny_gemma import load_tiny_gemma

    tiny_decoder = load_tiny_gemma(tmp_path / "gemma")
    asked = []
    monkeypatch.setattr("explorer.runtime.loading.load_model",
                        lambda ref, task, **kw: asked.append((ref.spec, task)) or tiny_decoder)
    res = qa.ask(qa.model_ref("gemma3-270m"), "Where did the cat sit?", "The cat sat on the mat.")
    assert asked == [("gemma3-270m", "causal-lm")] and res.kind == "generative"
    assert qa.is_generative(resolve("gemma3-270m")) and not qa.is_generative(resolve("deepset/roberta-base-squad2"))
    assert qa.qa_models()[0] == "gemma3-270m" and set(qa.QA_CHECKPOINTS) <= set(qa.qa_models())


@pytest.mark.slow
def test_real_gemma_answers_the_eiffel_tower_question_from_the_context(bundled_decoder) -> None:
    context = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It is "
               "named after the engineer Gustave Eiffel, whose company designed and built the tower from 1887 "
               "to 1889 as the centerpiece of the 1889 World's Fair.")
    res = qa.ask(resolve("gemma3-270m"), "When was the Eiffel Tower built?", context)
    assert res.kind == "generative" and res.match == "whole" and "1889" in res.answer
    assert context[res.start:res.end].lower() == res.answer.strip().rstrip(".").lower()


def test_inputs_go_where_the_model_is_whatever_loaded_says(tiny) -> None:
    """A caller's stale ``device`` (a namespace saying "meta" for a model on the CPU or CUDA) is not trusted."""
    from types import SimpleNamespace

    loaded = load_model(resolve(str(tiny["distilbert-qa"])), "question-answering")
    stale = SimpleNamespace(**{k: getattr(loaded, k) for k in ("model", "tokenizer", "key", "name", "untrained")},
                            device="meta")
    assert qa.answer(stale, "When was it built?", CONTEXT).answer == qa.answer(loaded, "When was it built?",
                                                                               CONTEXT).answer
