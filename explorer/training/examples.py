"""One training example: a window of corpus tokens, corrupted by the objective's own strategy.

The corruption is :func:`explorer.objectives.run` itself, the function the Objectives page
draws, seeded from (run seed, window index) and, for dynamic masking, the epoch. The result
becomes id lists that :mod:`explorer.training.batches` pads into tensors. Labels use -100 for
"no loss here", as transformers' losses do.

>>> from explorer.training import recipes, vocab
>>> tok = vocab.tokenizer()
>>> window = ["[CLS]", *tok.tokenize("The list is sorted. Then it is printed."), "[SEP]"]
>>> ex = features(recipes.get("albert"), window, seed=0, index=0, epoch=0, tok=tok, vocab=vocab.objective_vocab())
>>> sorted(ex), ex["sentence_label"] in (0, 1)
(['input_ids', 'labels', 'sentence_label', 'token_type_ids'], True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explorer import objectives
from explorer.core.handles import Tokenizer
from explorer.objectives.base import MaskedLMResult, SentencePairResult, Vocab
from explorer.training.recipes import Recipe

__all__ = ["IGNORE", "draw", "features", "ids", "seed_for"]

IGNORE = -100  # the label transformers' cross-entropy skips


def seed_for(seed: int, index: int) -> int:
    """One seed per (run, window): the same window draws the same corruption in every run with this seed."""
    return (seed * 1_000_003 + index) % (2**32)


def ids(tok: Tokenizer, tokens: Sequence[str | None]) -> list[int]:
    """Token strings -> ids; None (no target) -> IGNORE."""
    out = tok.convert_tokens_to_ids([t if t is not None else "[PAD]" for t in tokens])
    return [IGNORE if t is None else i for t, i in zip(tokens, out, strict=True)]


def draw(recipe: Recipe, strategy: str, window: Sequence[str], seed: int, index: int, epoch: int,
         vocab: Vocab) -> objectives.ObjectiveResult:
    """The strategy's corruption of one window; a static recipe keeps epoch 0's draw forever."""
    return objectives.run(strategy, window, seed_for(seed, index), vocab, epoch=epoch if recipe.dynamic else 0)


def features(recipe: Recipe, window: Sequence[str], seed: int, index: int, epoch: int, tok: Tokenizer,
             vocab: Vocab) -> dict[str, Any]:
    """Id lists for the masked-LM family (with NSP/SOP when the recipe has a sentence objective)."""
    tokens, segments = list(window), [0] * len(window)
    out: dict[str, object] = {}
    if recipe.sentence:
        pair = draw(recipe, recipe.sentence, window, seed, index, epoch, vocab)
        assert isinstance(pair, SentencePairResult)
        tokens, segments = list(pair.input_tokens), list(pair.segment_ids)
        if len(tokens) > len(window) >= 3:  # a pair never outgrows its window (the memory plan and the positions
            # count on it): NSP's random B can be longer, SOP's halves add a [SEP]; B's end goes, its [SEP] stays
            tokens, segments = tokens[:len(window) - 1] + tokens[-1:], segments[:len(window) - 1] + segments[-1:]
        out["sentence_label"] = pair.classes.index(pair.label)
    masked = draw(recipe, recipe.strategy, tokens, seed, index, epoch, vocab)
    assert isinstance(masked, MaskedLMResult)
    out.update(input_ids=ids(tok, masked.input_tokens), labels=ids(tok, masked.targets), token_type_ids=segments)
    return out
