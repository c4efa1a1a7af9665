"""Perplexity: a text shorter than a window equals a direct cross-entropy; rolling windows score every token once,
each as lm-eval's windows (checked against lm-eval's own window function); the head applied in slices equals
the model's own; a request's budget keeps the windows scored; the cost is said before any window runs, a window that
would not fit is not started, and the page's window-a-request parts continue where the last call stopped."""

from __future__ import annotations

import math

import pytest
import torch
from lm_eval.utils import get_rolling_token_windows, make_disjoint_window

from explorer.core.errors import ExplorerError
from explorer.evaluation import bundled, cost, perplexity, rolling
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


def _ticking(budget: float, step: float = 1.0) -> cancel.CancelToken:
    """A request whose clock moves ``step`` seconds each time it is read (never the machine's own time)."""
    now = [0.0]

    def clock() -> float:
        now[0] += step
        return now[0]

    return cancel.CancelToken(cancel.RequestBudget(budget, 2**40, "test"), clock=clock, memory=lambda: 0)


class _Kept(dict):
    """A pace table that keeps its figures (a window measured here does not replace them)."""

    def __setitem__(self, key: object, value: object) -> None:
        pass


def test_the_cost_is_known_before_any_window_and_from_the_models_size(tiny, monkeypatch) -> None:
    monkeypatch.setattr(cost, "_PACE", {})  # nothing measured here yet
    scorer = local_scorer(tiny)
    plan = perplexity.estimate(scorer, TEXT, window=4)
    res = perplexity.perplexity(scorer, TEXT, window=4)
    assert (plan.tokens, plan.windows, plan.window) == (res.tokens, res.total_windows, 4)
    params = sum(p.numel() for p in tiny.model.parameters())
    assert plan.seconds == pytest.approx(sum(plan.work) * 2 * params / cost.TYPICAL_CPU_FLOPS)
    assert plan.work[0] == 4 and "typical 2-core CPU" in plan.pace and f"{plan.tokens:,} tokens in" in plan.said
    assert "measured here" in perplexity.estimate(scorer, TEXT, window=4).pace  # the run set this process's pace


def test_a_window_that_would_not_fit_is_not_started_and_the_next_ones_are_cut(tiny, monkeypatch) -> None:
    scorer = local_scorer(tiny)
    monkeypatch.setitem(cost._PACE, (tiny.key, "cpu"), 3.0)  # 3 s a token read: a window of 4 is 12 s
    with cancel.scope(_ticking(10.0)), pytest.raises(ExplorerError, match="window 1 of .* about 12 s.*not started"):
        perplexity.perplexity(scorer, TEXT, window=4)
    monkeypatch.setattr(cost, "_PACE", _Kept({(tiny.key, "cpu"): 3.0}))  # each window planned at 12 s
    with cancel.scope(_ticking(25.0)):  # a few clock reads a window: the fourth would not fit
        res = perplexity.perplexity(scorer, TEXT, window=4)
    assert 0 < res.windows < res.total_windows and "next window would have passed" in res.notices[0].text


def test_the_pages_parts_continue_where_the_last_call_stopped_and_equal_one_run(tiny) -> None:
    """Each part "takes" 5 s of a fake clock unless the page's cache has it; 12 s a call: three windows, then three
    more on asking again, and the whole text in the end, equal to one run of it."""
    scorer, cached, now = local_scorer(tiny), {}, [0.0]
    whole = perplexity.perplexity(scorer, TEXT, window=4)

    def part(first: int, last: int) -> perplexity.Perplexity:
        if (first, last) not in cached:
            now[0] += 5.0
            cached[first, last] = perplexity.perplexity(scorer, TEXT, window=4, first=first, last=last)
        return cached[first, last]

    plan = perplexity.estimate(scorer, TEXT, window=4)
    calls: list[perplexity.Perplexity] = []
    while not calls or not calls[-1].complete:
        calls.append(perplexity.in_parts(part, plan, TEXT, 12.0, clock=lambda: now[0]))
    assert [c.windows for c in calls[:2]] == [3, 6] and "run it again to continue" in calls[0].notices[0].text
    last = calls[-1]
    assert last.tokens == whole.tokens and last.logprob == pytest.approx(whole.logprob, abs=1e-4)
    assert last.word_perplexity == pytest.approx(whole.word_perplexity, rel=1e-5) and not last.notices
