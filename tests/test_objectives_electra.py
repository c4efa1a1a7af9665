"""ELECTRA: labels agree with the tokens, correct guesses count as original, budget and rates."""

from __future__ import annotations

import math

from explorer.objectives import STRATEGIES, run
from explorer.objectives.base import is_special
from explorer.objectives.electra import electra
from explorer.objectives.mlm import budget, epoch_rng
from explorer.objectives.text import EXAMPLE_TEXT, prepare


def prep():
    s = STRATEGIES["electra"]
    return prepare(EXAMPLE_TEXT, s.tokenizer, s.frame)


def test_labels_agree_with_tokens_over_many_draws() -> None:
    p = prep()
    for d in range(800):
        r = run("electra", p.tokens, 0, p.vocab, epoch=d)
        assert r.labels == tuple(int(a != b) for a, b in zip(r.input_tokens, r.original_tokens, strict=True))
        assert all(r.labels[i] == 0 and r.input_tokens[i] == t
                   for i, t in enumerate(r.original_tokens) if is_special(t))
        assert sum(t is not None for t in r.targets) == budget(sum(not is_special(t) for t in p.tokens))
        # the generator input masks exactly the predicted positions
        assert [g == "[MASK]" for g in r.generator_input] == [t is not None for t in r.targets]


def test_proposing_the_original_counts_as_original() -> None:
    p = prep()
    always = electra(p.tokens, epoch_rng(1, 0), p.vocab, p_original=1.0)
    assert always.n_predicted > 0 and sum(always.labels) == 0
    assert set(always.kinds) <= {"sampled = original", "not selected", "special"}
    never = electra(p.tokens, epoch_rng(1, 0), p.vocab, p_original=0.0)
    assert sum(never.labels) >= never.n_predicted - 1  # a uniform pick equals the original ~1/30k


def test_replaced_fraction_matches_p_original() -> None:
    p, trials, replaced = prep(), 0, 0
    for d in range(3000):
        r = electra(p.tokens, epoch_rng(2, d), p.vocab, p_original=0.25)
        trials += r.n_predicted
        replaced += sum(r.labels)
    expected = 0.75 * (1 - 1 / len(p.vocab.replacements))
    assert abs(replaced / trials - expected) < 4.5 * math.sqrt(expected * (1 - expected) / trials)
