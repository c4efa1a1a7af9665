"""Prefix-KV scoring equals naive whole-text scoring; the beam equals brute force when it may try everything."""

from __future__ import annotations

import itertools

import pytest
import torch

from explorer.architecture.build import BUILD_LOCK
from explorer.tasks.causal import scoring
from explorer.tasks.causal.scoring import PrefixScorer, beam_continuations, naive_scores, sequence_logprob
from tests.tiny_gemma import load_tiny_gemma, tiny_gemma_config


@pytest.fixture(scope="module")
def gemma(tmp_path_factory):
    # float32 on the CPU: these tests hold the cached scoring to the naive one at 1e-4 (tests/gpu: per device)
    return load_tiny_gemma(tmp_path_factory.mktemp("gemma"), device="cpu").model


@pytest.fixture(scope="module")
def small_vocab():
    """A tiny Gemma-3 with a 7-token vocabulary: every 2-token answer can be enumerated."""
    from transformers import Gemma3ForCausalLM

    with BUILD_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(3)
        return Gemma3ForCausalLM(tiny_gemma_config(7, 0)).eval()


PREFIX = [50256, 464, 3139, 286, 4881, 318, 262, 3139, 286]  # longer than the sliding window (4)


def test_prefix_cache_equals_naive(gemma):
    middles = [(int(i),) for i in range(100, 150)] + [(11, 12, 13), (7,)]
    suffix = [286, 4881, 13]
    fast = PrefixScorer(gemma, PREFIX).scores(middles, suffix)
    slow = naive_scores(gemma, PREFIX, middles, suffix)
    assert max(abs(a - b) for a, b in zip(fast, slow, strict=True)) < 1e-4
    assert sorted(range(len(fast)), key=lambda i: -fast[i]) == sorted(range(len(slow)), key=lambda i: -slow[i])


def test_scoring_twice_gives_the_same_numbers(gemma):
    """The stored prefix cache is never mutated by a forward (transformers 5 caches are)."""
    scorer = PrefixScorer(gemma, PREFIX)
    first = scorer.scores([(5,), (6, 7)], [9])
    assert scorer.scores([(5,), (6, 7)], [9]) == first


def test_logprobs_are_at_most_zero_and_next_is_a_distribution(gemma):
    scorer = PrefixScorer(gemma, PREFIX)
    assert all(s <= 0 for s in scorer.scores([(1,), (2, 3)], [4, 5]))
    assert scorer.prefix_logprob == pytest.approx(sequence_logprob(gemma, PREFIX), abs=1e-4)
    assert float(scorer.next_logprobs.exp().sum()) == pytest.approx(1.0, abs=1e-4)


def test_next_after_equals_a_fresh_forward(gemma):
    scorer = PrefixScorer(gemma, PREFIX)
    rows = scorer.next_after([(), (17, 18)])  # (2, V)
    with torch.inference_mode():
        fresh = torch.log_softmax(gemma(input_ids=torch.tensor([[*PREFIX, 17, 18]])).logits[0, -1], -1)
    assert torch.allclose(rows[1], fresh, atol=1e-4)
    assert torch.equal(rows[0], scorer.next_logprobs)


class _NoLogitsToKeep(torch.nn.Module):
    """A causal LM whose forward has no ``logits_to_keep``: every position comes back projected."""

    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    @property
    def device(self) -> torch.device:
        return self.inner.device

    def forward(self, input_ids, past_key_values=None, use_cache=None):
        return self.inner(input_ids=input_ids, past_key_values=past_key_values, use_cache=use_cache)


def _forwards(model: torch.nn.Module, run):
    """``run()`` and how many forwards of ``model`` it made."""
    calls = []
    hook = model.register_forward_hook(lambda *_: calls.append(1))
    try:
        return run(), len(calls)
    finally:
        hook.remove()


def test_a_batch_split_over_many_forwards_scores_as_one_forward(gemma, monkeypatch):
    """The rows per forward come from a memory budget: one row per forward must not change a number."""
    middles = [(int(i),) for i in range(100, 130)] + [(11, 12, 13), (7,), (8, 9)]  # padded tails too
    suffix, scorer = [286, 4881, 13], PrefixScorer(gemma, PREFIX)
    whole, calls = _forwards(gemma, lambda: scorer.scores(middles, suffix))
    after = _forwards(gemma, lambda: scorer.next_after([(17,), (), (17, 18)]))[0]
    assert calls == 1  # 33 short tails on a tiny model: far below the budget
    monkeypatch.setattr(scoring, "FORWARD_BYTES", 1)
    split, calls = _forwards(gemma, lambda: scorer.scores(middles, suffix))
    assert calls == len(middles)
    # float32 rounding only: another batch size takes other matrix kernels (1.2e-7 relative seen on sums near -130)
    assert split == pytest.approx(whole, rel=1e-6, abs=1e-5)
    assert torch.allclose(scorer.next_after([(17,), (), (17, 18)]), after, atol=1e-5)


def test_a_model_without_logits_to_keep_scores_the_same(gemma):
    middles, suffix = [(5,), (6, 7), (8, 9, 10)], [9, 11]
    plain = PrefixScorer(_NoLogitsToKeep(gemma), PREFIX)
    assert plain.scores(middles, suffix) == pytest.approx(PrefixScorer(gemma, PREFIX).scores(middles, suffix), abs=1e-5)
    assert plain.scores(middles, suffix) == pytest.approx(naive_scores(gemma, PREFIX, middles, suffix), abs=1e-4)
    assert torch.allclose(plain.next_after([(5,), (6, 7)]), PrefixScorer(gemma, PREFIX).next_after([(5,), (6, 7)]),
                          atol=1e-5)


def test_one_token_tails_need_no_projected_position(gemma):
    scorer = PrefixScorer(gemma, PREFIX)
    got = scorer.scores([(5,), (6,)], ())
    assert got == pytest.approx([scorer.prefix_logprob + float(scorer.next_logprobs[i]) for i in (5, 6)], abs=1e-5)


def test_full_width_beam_equals_brute_force(small_vocab):
    prefix, suffix, vocab = [0, 3, 5], [2, 6], range(7)
    scorer = PrefixScorer(small_vocab, prefix)
    found = beam_continuations(scorer, suffix, max_tokens=2, width=7, expand=7)
    every = [(a,) for a in vocab] + list(itertools.product(vocab, vocab))
    brute = dict(zip(every, naive_scores(small_vocab, prefix, every, suffix), strict=True))
    best = max(brute, key=brute.get)
    assert found[0].ids == best
    assert found[0].logprob == pytest.approx(brute[best], abs=1e-4)
    assert len(found) == len(every)


def test_narrow_beam_keeps_only_extensions_of_its_best(small_vocab):
    scorer = PrefixScorer(small_vocab, [0, 1])
    found = beam_continuations(scorer, [4], max_tokens=3, width=2, expand=3, banned=frozenset({0}))
    assert all(0 not in c.ids for c in found)
    assert max(len(c.ids) for c in found) == 3
    assert [c.logprob for c in found] == sorted((c.logprob for c in found), reverse=True)
