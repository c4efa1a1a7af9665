"""SpanBERT (geometric whole-word spans, SBO) and T5 span corruption (sentinels, exact reconstruction)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from explorer.objectives import STRATEGIES, run
from explorer.objectives.base import words
from explorer.objectives.spans import spanbert_length_pmf, t5_noise_mask, t5_reconstruct
from explorer.objectives.stats import draw_stats, t5_length_pmf
from explorer.objectives.text import EXAMPLE_TEXT, prepare


def prep(name: str, text: str = EXAMPLE_TEXT):
    s = STRATEGIES[name]
    return prepare(text, s.tokenizer, s.frame)


def test_spanbert_pmf_is_truncated_geometric_with_mean_3_8() -> None:
    pmf = spanbert_length_pmf()
    assert pmf.sum() == pytest.approx(1.0) and len(pmf) == 10
    assert pmf[1] / pmf[0] == pytest.approx(0.8)
    assert float(np.dot(np.arange(1, 11), pmf)) == pytest.approx(3.797, abs=1e-3)


def test_spanbert_span_lengths_follow_the_geometric() -> None:
    p = prep("spanbert")
    # The first length of every draw is never conditioned on the budget: a clean sample.
    first = [run("spanbert", p.tokens, 0, p.vocab, epoch=d).sampled_lengths[0] for d in range(6000)]
    mean, pmf = float(np.mean(first)), spanbert_length_pmf()
    sd = math.sqrt(float(np.dot((np.arange(1, 11) - 3.797) ** 2, pmf)))
    assert abs(mean - 3.797) < 4.5 * sd / math.sqrt(len(first))
    counts = Counter(first)
    for length in range(1, 11):
        p_l = pmf[length - 1]
        assert abs(counts[length] / len(first) - p_l) < 4.5 * math.sqrt(p_l * (1 - p_l) / len(first))


def test_spanbert_whole_words_budget_and_boundaries() -> None:
    p = prep("spanbert")
    groups = words(p.tokens, "wordpiece")
    n = sum(len(g) for g in groups)
    for seed in range(300):
        r = run("spanbert", p.tokens, seed, p.vocab)
        for g in groups:
            assert len({r.targets[i] is not None for i in g}) == 1
        assert math.ceil(0.15 * n) <= r.n_predicted < math.ceil(0.15 * n) + max(map(len, groups))
        for (s, e), (left, right) in zip(r.spans, r.boundaries, strict=True):
            assert (left, right) == (s - 1, e) and left >= 0 and right < len(p.tokens)
            assert [r.span_positions[i] for i in range(s, e)] == list(range(1, e - s + 1))
            # 80/10/10 is decided per span: one kind for the whole span
            assert len({r.kinds[i] for i in range(s, e)}) == 1


def test_t5_paper_example_format() -> None:
    p = prep("t5", "Thank you for inviting me to your party last week.")
    for seed in range(50):
        r = run("t5", p.tokens, seed, p.vocab)
        k = len(r.spans)
        sentinels = [t for t in r.input_tokens if t.startswith("<extra_id_")]
        assert sentinels == [f"<extra_id_{i}>" for i in range(k)]
        assert r.target_tokens[0] == "<extra_id_0>" and r.target_tokens[-2:] == (f"<extra_id_{k}>", "</s>")
        assert r.input_tokens[-1] == "</s>"


def test_t5_reconstructs_the_original_exactly() -> None:
    p = prep("t5")
    for d in range(2000):
        r = run("t5", p.tokens, 1, p.vocab, epoch=d)
        assert t5_reconstruct(r.input_tokens, r.target_tokens) == list(r.original_tokens)


@pytest.mark.parametrize("n_body", [None, 200])
def test_t5_rate_and_mean_span_length_three(n_body: int | None) -> None:
    p = prep("t5")
    tokens = p.tokens if n_body is None else tuple(f"▁w{i}" for i in range(n_body)) + ("</s>",)
    st = draw_stats("t5", tokens, p.vocab, seed=2, n_draws=3000)
    assert st.rate == pytest.approx(st.expected_rate) and 0.14 <= st.rate <= 0.16
    lengths = Counter(st.span_lengths)
    total = sum(lengths.values())
    # noise = round(15% n) tokens in round(noise / 3) spans: the mean is noise / spans in every
    # draw, exactly 3 when 3 divides the noise count (200 tokens: 30 in 10 spans).
    mean = sum(k * v for k, v in lengths.items()) / total
    assert mean == pytest.approx(st.theory_mean) and abs(mean - 3.0) <= 0.5
    if n_body == 200:
        assert mean == 3.0
    for length, p_l in st.theory.items():  # a uniform random composition of the noise into spans
        assert abs(lengths[length] / total - p_l) < 4.5 * math.sqrt(p_l * (1 - p_l) / total) + 1e-9


def test_t5_noise_mask_edge_cases() -> None:
    rng = np.random.default_rng(0)
    assert not t5_noise_mask(0, rng).any() and not t5_noise_mask(1, rng).any()
    m = t5_noise_mask(2, rng)
    assert m.sum() == 1 and not m[0]  # T5 never starts with noise
    assert t5_length_pmf(9, 3)[1] == pytest.approx(math.comb(7, 1) / math.comb(8, 2))
