"""Perplexity: a text shorter than a window equals a direct cross-entropy; rolling windows score every token once,
each as lm-eval's windows (checked against lm-eval's own window function); the head applied in slices equals
the model's own; a request's budget keeps the windows scored."""

from __future__ import annotations

import math

import pytest
import torch
from lm_eval.utils import get_rolling_token_windows, make_disjoint_window

from explorer.core.errors import ExplorerError
from explorer.evaluation import bundled, perplexity, rolling
from explorer.evaluation.decoder import prefix_token
from explorer.evaluation.scorer import local_scorer, scorer_for
from explorer.runtime import cancel
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import resolve
from tests.tiny_gemma import save_tiny_gemma

TEXT = "The old lighthouse stood at the edge of the cliff for more than a century, and every evening the keeper lit it."


def cross_entropy_perplexity(model: torch.nn.Module, ids: list[int]) -> float:
    """exp of the mean cross-entropy of ids[1:] given the tokens before, one forward with full logits."""
    x = torch.tensor([ids])
    with torch.inference_mode():
        logits = model(input_ids=x).logits[0, :-1].float()
    return math.exp(float(torch.nn.functional.cross_entropy(logits, x[0, 1:])))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = save_tiny_gemma(tmp_path_factory.mktemp("tiny-gemma-ppl"))
    return load_model(resolve(str(path)), "causal-lm", device="cpu")


@pytest.mark.parametrize("n, window", [(1, 4), (5, 5), (11, 4), (30, 7), (7, 1)])
def test_windows_are_lm_evals(n: int, window: int) -> None:
    tokens = list(range(100, 100 + n))
    theirs = [make_disjoint_window(w) for w in get_rolling_token_windows(tokens, 2, window, 1)]
    assert rolling.windows(tokens, 2, window) == [(list(a), list(b)) for a, b in theirs]


def test_a_short_text_equals_the_direct_cross_entropy(tiny) -> None:
    res = perplexity.perplexity(local_scorer(tiny), TEXT)
    ids = [prefix_token(tiny.tokenizer), *tiny.tokenizer(TEXT, add_special_tokens=False)["input_ids"]]
    assert res.windows == 1 and res.tokens == len(ids) - 1 and res.complete
    assert res.perplexity == pytest.approx(cross_entropy_perplexity(tiny.model, ids), rel=1e-5)
    words, size = len(TEXT.split()), len(TEXT.encode())
    assert res.word_perplexity == pytest.approx(math.exp(-res.logprob / words))
    assert res.bits_per_byte == pytest.approx(-res.logprob / size / math.log(2))


def test_rolling_windows_each_equal_their_own_forward(tiny) -> None:
    ids = tiny.tokenizer(TEXT, add_special_tokens=False)["input_ids"]
    res = perplexity.perplexity(local_scorer(tiny), TEXT, window=6)
    total = 0.0
    for ctx, pred in rolling.windows(ids, prefix_token(tiny.tokenizer), 6):
        x = torch.tensor([ctx + pred[:-1]])
        with torch.inference_mode():
            lp = torch.log_softmax(tiny.model(input_ids=x).logits[0].float(), -1)[len(ctx) - 1:]
        total += float(lp.gather(1, torch.tensor(pred)[:, None]).sum())
    assert res.windows == math.ceil(len(ids) / 6) and res.tokens == len(ids)
    assert res.logprob == pytest.approx(total, abs=1e-3)


def test_a_head_it_cannot_reproduce_falls_back_to_the_models_own(tiny, monkeypatch) -> None:
    want = rolling.window_logprobs(tiny.model, [1], list(range(5, 40)))
    monkeypatch.setattr(rolling, "_head", lambda model, hidden: model.get_output_embeddings()(hidden) * 2)
    monkeypatch.setattr(rolling, "HEAD_ROWS", 8)  # the fallback projects in slices too
    assert rolling.window_logprobs(tiny.model, [1], list(range(5, 40))).tolist() == pytest.approx(want.tolist(),
                                                                                                 abs=1e-5)


def test_the_budget_keeps_the_windows_scored(tiny) -> None:
    clock = iter([0.0, 0.0, 0.0, 0.0, 99.0] + [99.0] * 50)
    token = cancel.CancelToken(cancel.RequestBudget(10.0, 2**40, "test"), clock=lambda: next(clock),
                               memory=lambda: 0)
    with cancel.scope(token):
        res = perplexity.perplexity(local_scorer(tiny), TEXT, window=4)
    assert 0 < res.windows < res.total_windows and not res.complete
    assert res.notices[0].kind == "stopped" and math.isnan(res.word_perplexity)
    assert res.to_dict()["word_perplexity"] is None  # JSON has no NaN


@pytest.mark.parametrize("text, needle", [("", "empty"), ("  \n", "empty"), ("a\x00b", "NUL"),
                                          ("x" * 200_001, "at most 200,000")])
def test_bad_texts_are_refused_before_any_work(tiny, text: str, needle: str) -> None:
    with pytest.raises(ExplorerError, match=needle):
        perplexity.perplexity(local_scorer(tiny), text)


@pytest.mark.slow
def test_gemma_perplexity_of_a_short_text_equals_the_direct_cross_entropy(bundled_decoder) -> None:
    scorer = scorer_for(resolve("gemma3-270m"), device="cpu")
    text = bundled.text()[:400]
    res = perplexity.perplexity(scorer, text)
    tok = scorer.loaded.tokenizer
    ids = [prefix_token(tok), *tok(text, add_special_tokens=False)["input_ids"]]
    assert res.perplexity == pytest.approx(cross_entropy_perplexity(scorer.loaded.model, ids), rel=1e-4)
