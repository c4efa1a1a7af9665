"""Shared pieces of every objective: result types, the vocabulary context, token helpers.

A strategy is a pure function ``(tokens, rng, vocab, **options) -> result``: the same tokens,
the same seeded ``numpy.random.Generator`` state and the same options always give the same
result. Special tokens are recognised by their spelling (``[CLS]``, ``</s>``, ``<extra_id_3>``...)
and are never selected for masking.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = ["SENTENCE_END", "SPECIAL_TOKENS", "MaskedLMResult", "ObjectiveResult", "Option",
    "SentencePairResult", "Seq2SeqResult", "Vocab", "bare", "eighty_ten_ten", "eligible", "frame", "is_special",
    "random_segmentation", "sentences", "sentinel", "token_result", "word_starts", "words"]

SPECIAL_TOKENS = frozenset({
    "[CLS]", "[SEP]", "[PAD]", "[MASK]", "<s>", "</s>", "<pad>", "<mask>", "<|endoftext|>",
})
_SENTINEL = re.compile(r"<extra_id_\d+>")
SENTENCE_END = frozenset({".", "!", "?"})
# Kinds shared by the token-level strategies (what happened to each position).
MASKED, RANDOM, KEPT, NOT_SELECTED, SPECIAL = "masked", "random", "kept", "not selected", "special"


@lru_cache(maxsize=1 << 16)
def is_special(token: str) -> bool:
    """True for tokens a tokenizer adds (never masked, never counted in a budget).

    >>> is_special("[CLS]"), is_special("<extra_id_3>"), is_special("<extra_id_x>")
    (True, True, False)
    """
    # The prefix test first: a regex per token dominated the cost of a 512-token draw.
    return token in SPECIAL_TOKENS or (token.startswith("<extra_id_") and bool(_SENTINEL.fullmatch(token)))


def sentinel(i: int) -> str:
    """T5's i-th sentinel token."""
    return f"<extra_id_{i}>"


@dataclass(frozen=True)
class Vocab:
    """What a strategy needs from its tokenizer.

    ``replacements``: the non-special vocabulary that random replacements are drawn from.
    ``scheme``: how pieces mark words: "wordpiece" ("##" continues a word), "sentencepiece"
    ("▁" starts one) or "bpe" ("Ġ" starts one). ``corpus``: sentences (token tuples) of *other*
    documents, used by the objectives that pair a sentence with a random one (NSP, StructBERT).
    """

    replacements: tuple[str, ...]
    mask: str = "[MASK]"
    scheme: str = "wordpiece"
    cls: str = "[CLS]"
    sep: str = "[SEP]"
    corpus: tuple[tuple[str, ...], ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if not self.replacements:
            raise ValueError("Vocab.replacements must not be empty")


def _lists(d: dict[str, object]) -> dict[str, object]:
    """Tuples -> lists recursively, so that to_dict() output is plain JSON."""
    def conv(v: object) -> object:
        if isinstance(v, (tuple, list)):
            return [conv(x) for x in v]
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        return v
    return {k: conv(v) for k, v in d.items()}


@dataclass(frozen=True)
class MaskedLMResult:
    """A token-level objective: input and targets are aligned with the original (length T).

    ``targets[i]`` is the token the model must predict at position i, or None.
    ``kinds[i]`` says what happened there ("masked", "random", "kept", "not selected", "special").
    """

    strategy: str
    original_tokens: tuple[str, ...]  # (T,)
    input_tokens: tuple[str, ...]  # (T,)
    targets: tuple[str | None, ...]  # (T,)
    kinds: tuple[str, ...]  # (T,)

    @property
    def n_predicted(self) -> int:
        return sum(t is not None for t in self.targets)

    def columns(self) -> dict[str, tuple[Any, ...]]:
        """Extra per-position columns of the token table (subclasses add what defines them)."""
        return {}

    def notes(self, i: int) -> list[str]:
        """What besides its target defines position ``i`` (hover text; subclasses add to it)."""
        return []

    def to_dict(self) -> dict[str, object]:
        return _lists(asdict(self))


@dataclass(frozen=True)
class Seq2SeqResult:
    """An encoder-decoder objective: a corrupted input (length S) and a target sequence (U).

    ``kinds`` (T,) says what happened to each original token ("masked", "deleted", "unchanged",
    "special", ...); ``input_kinds`` (S,) what each input token is ("sentinel", "mask",
    "inserted mask", "unchanged", "special"). ``spans`` are (start, end) half-open ranges of the
    original that were removed (zero-length for BART insertions).
    """

    strategy: str
    original_tokens: tuple[str, ...]  # (T,)
    input_tokens: tuple[str, ...]  # (S,)
    target_tokens: tuple[str, ...]  # (U,)
    kinds: tuple[str, ...]  # (T,)
    input_kinds: tuple[str, ...]  # (S,)
    spans: tuple[tuple[int, int], ...] = ()
    sampled_lengths: tuple[int, ...] = ()  # span lengths as drawn, before fitting the budget
    steps: tuple[tuple[str, tuple[str, ...]], ...] = ()  # composition: (noise, tokens after it)
    detail: str = ""  # what defines this draw in words ("sentence order: 2, 1, 3")

    @property
    def span_lengths(self) -> tuple[int, ...]:
        return tuple(e - s for s, e in self.spans)

    def to_dict(self) -> dict[str, object]:
        return _lists(asdict(self))


@dataclass(frozen=True)
class SentencePairResult:
    """A sentence-level classification objective on ``[CLS] A [SEP] B [SEP]`` (length S).

    ``label`` is one of ``classes``; ``segment_ids`` (S,) are 0 for A and 1 for B.
    """

    strategy: str
    original_tokens: tuple[str, ...]  # (T,) the document
    input_tokens: tuple[str, ...]  # (S,)
    segment_ids: tuple[int, ...]  # (S,)
    input_kinds: tuple[str, ...]  # (S,) "sentence A" | "sentence B" | "special"
    label: str
    classes: tuple[str, ...]
    sentence_a: tuple[str, ...]
    sentence_b: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return _lists(asdict(self))


ObjectiveResult = MaskedLMResult | Seq2SeqResult | SentencePairResult  # what every strategy returns


@dataclass(frozen=True)
class Option:
    """One keyword option a strategy declares, as a widget: ``kind`` "slider" or "multiselect"."""

    keyword: str
    label: str
    kind: str
    default: Any
    choices: tuple[Any, ...] = ()  # multiselect choices, or (low, high, step) of a slider
    help: str = ""


# ----------------------------------------------------------------------------- token helpers


def eligible(tokens: Sequence[str]) -> np.ndarray:
    """(T,) bool, read-only: positions that may be selected (everything but special tokens)."""
    return _eligible(tuple(tokens))


@lru_cache(maxsize=64)
def _eligible(tokens: tuple[str, ...]) -> np.ndarray:
    # Cached: statistics run a strategy hundreds of times on the same tokens.
    out = np.fromiter((not is_special(t) for t in tokens), dtype=bool, count=len(tokens))
    out.setflags(write=False)
    return out


def word_starts(tokens: Sequence[str], scheme: str) -> np.ndarray:
    """(T,) bool: the token opens a new word (specials are words of their own).

    WordPiece marks continuations ("##ing"); SentencePiece and byte-level BPE mark word
    starts ("▁", "Ġ"). A piece right after a special token always starts a word (GPT-2's
    first word has no "Ġ" because no space precedes it).
    """
    out = np.ones(len(tokens), dtype=bool)
    marker = {"sentencepiece": "▁", "bpe": "Ġ"}.get(scheme)
    for i, tok in enumerate(tokens):
        if is_special(tok) or i == 0 or is_special(tokens[i - 1]):
            continue
        out[i] = tok.startswith(marker) if marker else not tok.startswith("##")
    return out


def words(tokens: Sequence[str], scheme: str) -> tuple[tuple[int, ...], ...]:
    """Non-special whole words, each as the tuple of its token positions (cached).

    >>> words(["[CLS]", "un", "##believ", "##able", "results", "[SEP]"], "wordpiece")
    ((1, 2, 3), (4,))
    """
    return _words(tuple(tokens), scheme)


@lru_cache(maxsize=64)
def _words(tokens: tuple[str, ...], scheme: str) -> tuple[tuple[int, ...], ...]:
    starts, ok = word_starts(tokens, scheme), eligible(tokens)
    out: list[list[int]] = []
    for i in range(len(tokens)):
        if not ok[i]:
            continue
        if starts[i] or not out or out[-1][-1] != i - 1:
            out.append([i])
        else:
            out[-1].append(i)
    return tuple(tuple(g) for g in out)


def bare(token: str) -> str:
    """The token without its word marker ("Ġ.", "▁." and "." all give ".")."""
    return token.lstrip("Ġ▁")


def sentences(tokens: Sequence[str]) -> list[list[int]]:
    """Sentences of the non-special tokens, as position lists; a sentence ends after . ! or ?"""
    out: list[list[int]] = [[]]
    for i, tok in enumerate(tokens):
        if is_special(tok):
            continue
        out[-1].append(i)
        if bare(tok) in SENTENCE_END:
            out.append([])
    return [s for s in out if s]


def frame(tokens: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """Split into leading specials, body, trailing specials ([CLS] | body | [SEP])."""
    lo, hi = 0, len(tokens)
    while lo < hi and is_special(tokens[lo]):
        lo += 1
    while hi > lo and is_special(tokens[hi - 1]):
        hi -= 1
    return list(tokens[:lo]), list(tokens[lo:hi]), list(tokens[hi:])


P_MASK, P_RANDOM = 0.8, 0.1  # BERT's split of the selected tokens; the rest stay unchanged


def eighty_ten_ten(
    tokens: Sequence[str], selected: np.ndarray, rng: np.random.Generator, vocab: Vocab,
    p_mask: float = P_MASK, p_random: float = P_RANDOM,
) -> tuple[list[str], list[str]]:
    """BERT's replacement rule on ``selected`` positions (int array, shape (K,)).

    Each selected token independently becomes the mask token (p_mask), a random vocabulary
    token (p_random) or stays unchanged (the rest). The unchanged 10% keep the model from
    learning that only [MASK] positions matter; the random 10% keep it from trusting the input.
    Returns (input tokens, kinds), both length T.
    """
    inp, kinds = list(tokens), [SPECIAL if is_special(t) else NOT_SELECTED for t in tokens]
    u = rng.random(len(selected))
    picks = rng.integers(len(vocab.replacements), size=len(selected))
    for pos, ui, pick in zip(selected.tolist(), u.tolist(), picks.tolist(), strict=True):
        if ui < p_mask:
            inp[pos], kinds[pos] = vocab.mask, MASKED
        elif ui < p_mask + p_random:
            inp[pos], kinds[pos] = vocab.replacements[pick], RANDOM
        else:
            kinds[pos] = KEPT
    return inp, kinds


def token_result(
    strategy: str, tokens: Sequence[str], inp: Sequence[str], kinds: Sequence[str], selected: np.ndarray,
) -> MaskedLMResult:
    """Assemble a MaskedLMResult: targets are the originals at the selected positions."""
    chosen = set(selected.tolist())
    targets = tuple(t if i in chosen else None for i, t in enumerate(tokens))
    return MaskedLMResult(strategy, tuple(tokens), tuple(inp), targets, tuple(kinds))


def random_segmentation(n_items: int, n_segments: int, rng: np.random.Generator) -> np.ndarray:
    """(n_segments,) positive ints summing to n_items, uniformly over such compositions.

    This is T5's ``random_segmentation``: choose n_segments-1 distinct cut points among the
    n_items-1 gaps between items.
    """
    if n_segments <= 0:
        return np.zeros(0, dtype=int)
    cuts = (np.sort(rng.choice(n_items - 1, size=n_segments - 1, replace=False)) + 1 if n_segments > 1
            else np.zeros(0, int))
    return np.diff(np.concatenate([[0], cuts, [n_items]])).astype(int)
