"""BERT / whole-word / RoBERTa masking: budgets, 80/10/10, whole words, static vs dynamic."""

from __future__ import annotations

import math

import numpy as np
import pytest

from explorer.objectives import STRATEGIES, run
from explorer.objectives.base import MASKED, eligible, words
from explorer.objectives.mlm import budget, masking_over_epochs
from explorer.objectives.stats import draw_stats
from explorer.objectives.text import EXAMPLE_TEXT, prepare

DRAWS = 5_000


def prep(name: str):
    s = STRATEGIES[name]
    return prepare(EXAMPLE_TEXT, s.tokenizer, s.frame)


def within(observed: float, p: float, n: int, z: float = 4.5) -> bool:
    """|observed - p| within z binomial standard errors for n trials."""
    return abs(observed - p) <= z * math.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("name", ["bert", "wwm"])
def test_exact_budget_and_eighty_ten_ten(name: str) -> None:
    p = prep(name)
    st = draw_stats(name, p.tokens, p.vocab, seed=1, n_draws=DRAWS)
    n = st.n_eligible
    # Google's code selects exactly round(15%) (wwm: at most, whole words only).
    assert st.rate <= budget(n) / n + 1e-12
    if name == "bert":
        assert st.rate == pytest.approx(budget(n) / n) and st.rate_std == pytest.approx(0.0, abs=1e-12)
    total = sum(st.kind_counts.values())
    assert within(st.kind_counts["masked"] / total, 0.8, total)
    assert within(st.kind_counts["random"] / total, 0.1, total)
    assert within(st.kind_counts["kept"] / total, 0.1, total)


def test_every_position_can_be_selected_and_specials_never_are() -> None:
    p = prep("bert")
    st = draw_stats("bert", p.tokens, p.vocab, seed=2, n_draws=3000)
    freq = np.array(st.position_freq)
    ok = eligible(p.tokens)
    assert (freq[~ok] == 0).all()
    # uniform selection: each eligible position ~ budget/n (binomial over 3000 draws)
    expected = budget(int(ok.sum())) / ok.sum()
    assert all(within(f, expected, 3000, z=5) for f in freq[ok])


def test_whole_word_masking_keeps_words_together() -> None:
    p = prep("wwm")
    groups = words(p.tokens, "wordpiece")
    assert any(len(g) > 1 for g in groups), "the example must contain multi-piece words"
    for seed in range(300):
        r = run("wwm", p.tokens, seed, p.vocab)
        for g in groups:
            picked = {r.targets[i] is not None for i in g}
            assert len(picked) == 1, (seed, [p.tokens[i] for i in g])


def test_roberta_expected_rate_is_fifteen_percent() -> None:
    p = prep("roberta")
    tokens = p.tokens[:-2] + p.tokens[-1:]  # 39 maskable tokens: 0.15 n = 5.85 is not whole
    st = draw_stats("roberta", tokens, p.vocab, seed=3, n_draws=DRAWS)
    # int(0.15 n + U): the mean count is exactly 0.15 n; the per-draw spread is < 1 token.
    assert st.n_eligible == 39
    assert abs(st.rate - 0.15) <= 4.5 * st.rate_std / math.sqrt(DRAWS) + 1e-9
    assert st.rate_std > 0  # randomised rounding really varies the count


def test_dynamic_masks_differ_across_epochs_static_do_not() -> None:
    p = prep("roberta")
    dyn = masking_over_epochs(p.tokens, p.vocab, seed=7, n_epochs=6, dynamic=True)
    sta = masking_over_epochs(p.tokens, p.vocab, seed=7, n_epochs=6, dynamic=False)
    assert len({r.input_tokens for r in dyn}) >= 5
    assert len({r.input_tokens for r in sta}) == 1
    assert sta[0] == dyn[0]  # epoch 0 is the same draw either way
    assert run("roberta", p.tokens, 7, p.vocab, epoch=3) == dyn[3]


@pytest.mark.parametrize("name", ["bert", "wwm", "roberta"])
def test_same_seed_same_result_different_seed_differs(name: str) -> None:
    p = prep(name)
    a, b = run(name, p.tokens, 11, p.vocab), run(name, p.tokens, 11, p.vocab)
    assert a == b and a.to_dict() == b.to_dict()
    assert len({run(name, p.tokens, s, p.vocab).input_tokens for s in range(10)}) > 1


def test_targets_are_originals_and_mask_token_is_the_frames() -> None:
    p = prep("roberta")
    r = run("roberta", p.tokens, 5, p.vocab)
    for orig, inp, tgt, kind in zip(r.original_tokens, r.input_tokens, r.targets, r.kinds, strict=True):
        assert tgt in (None, orig)
        if kind == MASKED:
            assert inp == "<mask>"
    assert r.original_tokens[0] == "<s>" and r.input_tokens[-1] == "</s>"


def test_random_replacements_come_from_the_real_vocabulary() -> None:
    p = prep("bert")
    repl = set(p.vocab.replacements)
    assert len(repl) > 29_000 and "[MASK]" not in repl and "[CLS]" not in repl and "[unused0]" not in repl
    randoms = set()
    for d in range(300):
        r = run("bert", p.tokens, 0, p.vocab, epoch=d)
        randoms |= {i for i, k in zip(r.input_tokens, r.kinds, strict=True) if k == "random"}
    assert randoms and randoms <= repl and len(randoms) > 100  # spread over the vocabulary


def test_expected_kinds_of_each_strategy() -> None:
    from explorer.objectives.stats import expected_kinds

    assert expected_kinds("bert") == {"masked": 0.8, "random": 0.1, "kept": 0.1}
    assert expected_kinds("electra", {"p_original": 0.4}) == {"replaced": 0.6, "sampled = original": 0.4}
    assert expected_kinds("t5") is None
