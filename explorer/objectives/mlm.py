"""Masked language modelling: BERT (static), whole-word masking, RoBERTa (dynamic).

BERT and whole-word masking follow Google's ``create_pretraining_data.py``: the budget is
``round(0.15 * n)`` non-special tokens (at least 1), candidates are visited in a random order
and each selected token gets the 80/10/10 rule. RoBERTa follows fairseq's
``MaskTokensDataset``: ``int(0.15 * n + U(0, 1))`` tokens (a randomised rounding), drawn again
for every epoch from a generator seeded with (seed, epoch).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from explorer.objectives.base import MaskedLMResult, Vocab, eighty_ten_ten, eligible, token_result, words

__all__ = ["MASK_RATE", "bert_mlm", "budget", "epoch_rng", "masking_over_epochs", "roberta_mlm",
    "whole_word_mlm"]

MASK_RATE = 0.15


def budget(n_eligible: int, rate: float = MASK_RATE) -> int:
    """How many tokens BERT predicts in a sequence with ``n_eligible`` maskable tokens."""
    return 0 if n_eligible == 0 else max(1, int(round(n_eligible * rate)))


def bert_mlm(tokens: Sequence[str], rng: np.random.Generator, vocab: Vocab, rate: float = MASK_RATE) -> MaskedLMResult:
    """BERT MLM: exactly ``budget(n)`` tokens chosen uniformly, then 80% mask / 10% random / 10% kept.

    BERT masks *statically*: the masks are written into the training files once (10 copies
    with different masks, each seen for 4 of the 40 epochs), so a sentence always comes back
    with one of the same few masks.
    """
    candidates = np.flatnonzero(eligible(tokens))  # (n,)
    selected = np.sort(rng.permutation(candidates)[: budget(len(candidates), rate)])
    inp, kinds = eighty_ten_ten(tokens, selected, rng, vocab)
    return token_result("bert", tokens, inp, kinds, selected)


def whole_word_mlm(tokens: Sequence[str], rng: np.random.Generator, vocab: Vocab,
                   rate: float = MASK_RATE) -> MaskedLMResult:
    """Whole-word masking: the same 15% budget, but all pieces of a word are selected together.

    Words are visited in random order; a word that would overshoot the budget is skipped (as
    in Google's code), so the realised rate is at most 15%. 80/10/10 is still decided per piece.
    """
    groups = words(tokens, vocab.scheme)
    limit = budget(sum(len(g) for g in groups), rate)
    chosen: list[int] = []
    for g in rng.permutation(len(groups)).tolist():
        if len(chosen) + len(groups[g]) <= limit:
            chosen.extend(groups[g])
        if len(chosen) == limit:
            break
    selected = np.array(sorted(chosen), dtype=int)
    inp, kinds = eighty_ten_ten(tokens, selected, rng, vocab)
    return token_result("wwm", tokens, inp, kinds, selected)


def roberta_mlm(tokens: Sequence[str], rng: np.random.Generator, vocab: Vocab,
                rate: float = MASK_RATE) -> MaskedLMResult:
    """One epoch of RoBERTa's dynamic masking (fairseq): ``int(rate * n + U)`` tokens, 80/10/10.

    Adding U(0, 1) before truncating makes the *expected* count exactly rate * n even for
    short sequences, where plain rounding would bias it.
    """
    candidates = np.flatnonzero(eligible(tokens))
    k = min(len(candidates), int(rate * len(candidates) + rng.random()))
    selected = np.sort(rng.choice(candidates, size=k, replace=False)) if k else np.zeros(0, dtype=int)
    inp, kinds = eighty_ten_ten(tokens, selected, rng, vocab)
    return token_result("roberta", tokens, inp, kinds, selected)


def epoch_rng(seed: int, epoch: int) -> np.random.Generator:
    """The generator of one epoch: a fresh, independent stream per (seed, epoch) pair."""
    return np.random.default_rng([int(seed), int(epoch)])


def masking_over_epochs(
    tokens: Sequence[str], vocab: Vocab, seed: int, n_epochs: int, dynamic: bool,
) -> tuple[MaskedLMResult, ...]:
    """The masks a sentence gets over ``n_epochs`` epochs.

    Dynamic (RoBERTa): epoch e uses ``epoch_rng(seed, e)``, a new mask every time.
    Static (BERT, one copy): every epoch reuses the mask of epoch 0.
    """
    return tuple(
        roberta_mlm(tokens, epoch_rng(seed, e if dynamic else 0), vocab) for e in range(n_epochs)
    )
