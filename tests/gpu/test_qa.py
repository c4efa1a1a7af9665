"""QA per device and dtype: extractive equals transformers' SQuAD post-processing, generative equals greedy
``generate``, both on the same weights and dtype; CPU and CUDA agree on the span."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorer.runtime.offload import input_device
from explorer.tasks import qa
from explorer.tasks.causal.answer import MAX_ANSWER_TOKENS, answer_question, qa_prompt
from explorer.tasks.generation.prompt import context_limit
from tests.gpu.conftest import CUDA_HALF, PLACES, TOLERANCE
from tests.gpu.peaked import place

CONTEXT = ("The Eiffel Tower is a wrought-iron lattice tower in Paris. It was built from 1887 to 1889 "
           "by the company of Gustave Eiffel for the World's Fair.")
QUESTION = "When was it built?"


def _squad(lm, enc, w: int, max_len: int) -> tuple[int, int, float]:
    from transformers.pipelines.document_question_answering import select_starts_ends

    names = [n for n in lm.tokenizer.model_input_names if n in enc]
    with torch.inference_mode():
        out = lm.model(**{n: enc[n][w : w + 1].to(input_device(lm.model)) for n in names})
    p_mask = np.array([[s != 1 for s in enc.sequence_ids(w)]], dtype=np.int64)
    p_mask[0, 0] = 0
    start, end = (x.float().cpu().numpy() for x in (out.start_logits, out.end_logits))
    s, e, score, _ = select_starts_ends(start, end, p_mask, enc["attention_mask"][w : w + 1].numpy(), max_len)
    return int(s[0]), int(e[0]), float(score[0])


@pytest.mark.parametrize("where", PLACES)
def test_extractive_equals_squad_post_processing(peaked_dir, where) -> None:
    lm = place(peaked_dir("distilbert-qa"), *where, "distilbert-qa")
    res = qa.answer(lm, QUESTION, CONTEXT, max_answer_len=7)
    enc = qa.qa_windows(lm.tokenizer, QUESTION, CONTEXT, qa.window_length(lm))
    i, j, score = _squad(lm, enc, res.window, 7)
    first = enc.sequence_ids(res.window).index(1)
    assert (res.span[0] + first, res.span[1] + first) == (i, j) and res.device == where[0]
    assert res.score == pytest.approx(score, abs=TOLERANCE[where[1]])
    assert res.answer == CONTEXT[res.start_char : res.end_char] and res.answer


@pytest.mark.parametrize("where", PLACES)
def test_generative_equals_greedy_generate(peaked_dir, where) -> None:
    lm = place(peaked_dir("gemma"), *where, "gemma")
    out = answer_question(lm, QUESTION, CONTEXT)
    ids, _ = qa_prompt(lm.tokenizer, QUESTION, CONTEXT, context_limit(lm.model))
    x = torch.tensor([ids], device=input_device(lm.model))
    with torch.inference_mode():
        ref = lm.model.generate(x, max_new_tokens=MAX_ANSWER_TOKENS, do_sample=False)[0, len(ids):].tolist()
    assert list(out.token_ids) == ref[: len(out.token_ids)] and out.token_ids  # ours stops at the first line


@pytest.mark.parametrize("where", CUDA_HALF)
def test_cuda_span_agrees_with_the_cpu(peaked_dir, where) -> None:
    cpu = qa.answer(place(peaked_dir("distilbert-qa"), "cpu", torch.float32, "distilbert-qa"), QUESTION, CONTEXT)
    gpu = qa.answer(place(peaked_dir("distilbert-qa"), *where, "distilbert-qa"), QUESTION, CONTEXT)
    assert (gpu.start_char, gpu.end_char) == (cpu.start_char, cpu.end_char)
