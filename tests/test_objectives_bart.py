"""BART noisings: rates, Poisson(3) infilling, one mask per span, insertions, permutation, rotation."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from explorer.core.errors import ExplorerError
from explorer.objectives import STRATEGIES, run
from explorer.objectives.bart import compose, text_infilling
from explorer.objectives.mlm import epoch_rng
from explorer.objectives.stats import draw_stats, poisson_pmf
from explorer.objectives.text import EXAMPLE_TEXT, prepare


def prep(name: str = "bart-infill"):
    s = STRATEGIES[name]
    return prepare(EXAMPLE_TEXT, s.tokenizer, s.frame)


@pytest.mark.parametrize("name", ["bart-mask", "bart-delete", "bart-infill"])
def test_thirty_percent_of_tokens_corrupted(name: str) -> None:
    p = prep(name)
    st = draw_stats(name, p.tokens, p.vocab, seed=0, n_draws=200)  # the count is exact every draw
    assert st.rate == pytest.approx(math.ceil(0.3 * st.n_eligible) / st.n_eligible)
    freq = np.array(st.position_freq)
    assert freq[0] == 0 and freq[-1] == 0  # <s> and </s> are never touched


def test_infilling_lengths_are_poisson_three() -> None:
    p = prep()
    # The first drawn length of each draw is an unconditioned Poisson(3) sample.
    first = [text_infilling(p.tokens, epoch_rng(0, d), p.vocab).sampled_lengths[0] for d in range(8000)]
    assert abs(np.mean(first) - 3.0) < 4.5 * math.sqrt(3.0 / len(first))
    counts, pmf = Counter(first), poisson_pmf(3.0, 8)
    for k, p_k in pmf.items():
        assert abs(counts[k] / len(first) - p_k) < 4.5 * math.sqrt(p_k * (1 - p_k) / len(first))


def test_infilling_one_mask_per_span_and_insertions() -> None:
    p = prep()
    saw_insert = False
    for d in range(1500):
        r = text_infilling(p.tokens, epoch_rng(3, d), p.vocab)
        n_masks = sum(t == "<mask>" for t in r.input_tokens)
        assert n_masks == len(r.spans)
        assert sum(e - s for s, e in r.spans) == math.ceil(0.3 * (len(p.tokens) - 2))
        assert r.target_tokens == r.original_tokens
        after_masks = [r.input_tokens[i] for i in range(1, len(r.input_tokens)) if r.input_tokens[i - 1] == "<mask>"]
        assert "<mask>" not in after_masks
        # dropping the masks from the input and the span tokens from the original agree
        kept = [t for i, t in enumerate(r.original_tokens) if r.kinds[i] != "masked"]
        assert kept == [t for t in r.input_tokens if t != "<mask>"]
        saw_insert |= "inserted mask" in r.input_kinds
    assert saw_insert  # P(0) = e^-3 per span: zero-length spans must show up


def test_permutation_and_rotation_keep_the_multiset_and_frame() -> None:
    p = prep("bart-permute")
    orders = Counter()
    for d in range(600):
        perm = run("bart-permute", p.tokens, 0, p.vocab, epoch=d)
        rot = run("bart-rotate", p.tokens, 0, p.vocab, epoch=d)
        for r in (perm, rot):
            assert sorted(r.input_tokens) == sorted(p.tokens)
            assert r.input_tokens[0] == "<s>" and r.input_tokens[-1] == "</s>"
        assert rot.input_tokens != p.tokens  # rotation never keeps the start
        orders[perm.detail] += 1
    assert len(orders) == 6 and min(orders.values()) > 60  # 3 sentences: 3! orders, uniform


def test_composition_applies_each_noise_in_order() -> None:
    p = prep("bart-compose")
    r = compose(p.tokens, epoch_rng(0, 0), p.vocab)
    assert [name for name, _ in r.steps] == ["permute", "infill"] and r.input_tokens == r.steps[-1][1]
    with pytest.raises(ExplorerError):
        compose(p.tokens, epoch_rng(0, 0), p.vocab, ("permute", "nope"))
