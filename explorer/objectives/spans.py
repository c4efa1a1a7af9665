"""Span objectives: SpanBERT (geometric spans of whole words + span boundary objective) and
T5 span corruption (sentinels in the input, sentinels + dropped spans as the target)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from explorer.objectives.base import (
    KEPT,
    MASKED,
    NOT_SELECTED,
    RANDOM,
    SPECIAL,
    MaskedLMResult,
    Seq2SeqResult,
    Vocab,
    eligible,
    is_special,
    random_segmentation,
    sentinel,
    words,
)

__all__ = ["SpanMaskResult", "spanbert", "spanbert_length_pmf", "t5_noise_mask", "t5_reconstruct",
    "t5_span_corruption"]

SPANBERT_P, SPANBERT_MAX = 0.2, 10
T5_NOISE, T5_MEAN_SPAN = 0.15, 3.0


def spanbert_length_pmf(p: float = SPANBERT_P, max_len: int = SPANBERT_MAX) -> np.ndarray:
    """(max_len,) P(span = l words) for l = 1..max_len: Geometric(p) truncated at max_len and
    renormalised (SpanBERT's code), so the mean is 3.8 words for p = 0.2."""
    lengths = np.arange(1, max_len + 1)
    pmf = p * (1 - p) ** (lengths - 1)
    return pmf / pmf.sum()


@dataclass(frozen=True)
class SpanMaskResult(MaskedLMResult):
    """SpanBERT: MaskedLMResult plus the spans and the span boundary objective (SBO).

    ``spans``: (start, end) half-open token ranges; ``boundaries``: per span the positions of
    the two tokens just outside it (x_{s-1}, x_{e+1}) from which SBO predicts every token
    inside; ``span_positions[i]``: 1-based position of target i inside its span, else None.
    """

    spans: tuple[tuple[int, int], ...] = ()
    boundaries: tuple[tuple[int, int], ...] = ()
    span_positions: tuple[int | None, ...] = ()
    span_words: tuple[int, ...] = ()  # realised length of every span in words
    sampled_lengths: tuple[int, ...] = ()  # the lengths drawn from the geometric distribution

    def columns(self) -> dict[str, tuple[Any, ...]]:
        return {"position in span": self.span_positions} if self.span_positions else {}

    def notes(self, i: int) -> list[str]:
        at = self.span_positions[i] if self.span_positions else None
        return [f"position {at} in its span"] if at else []


def _grow_span(sizes: np.ndarray, taken: np.ndarray, start: int, length: int, used: int, limit: int) -> list[int]:
    """Word indices of a span starting at word ``start``: up to ``length`` free words, stopping
    at a taken word or when ``used`` tokens reach the budget ``limit`` (the current word is
    always completed: masking stays whole-word)."""
    span: list[int] = []
    for w in range(start, min(start + length, len(sizes))):
        if taken[w] or used >= limit:
            break
        span.append(w)
        used += int(sizes[w])
    return span


def _spanbert_select(tokens: Sequence[str], rng: np.random.Generator, scheme: str, rate: float):
    """Choose SpanBERT's spans: returns (words, spans as word-index lists, sampled lengths)."""
    groups = words(tokens, scheme)
    sizes = np.array([len(g) for g in groups], dtype=int)  # (W,) tokens per word
    word_of = np.repeat(np.arange(len(groups)), sizes)  # (n,) word of each eligible token
    limit = math.ceil(int(sizes.sum()) * rate)
    cdf = np.cumsum(spanbert_length_pmf())
    taken = np.zeros(len(groups), dtype=bool)
    spans, sampled, used = [], [], 0
    for _ in range(50 * max(limit, 1)):  # rejection on taken anchors; bounded for safety
        if used >= limit or taken.all():
            break
        length = min(int(np.searchsorted(cdf, rng.random(), side="right")), SPANBERT_MAX - 1) + 1
        anchor = int(word_of[rng.integers(len(word_of))])  # anchor ~ token, snapped to its word
        if taken[anchor]:
            continue
        span = _grow_span(sizes, taken, anchor, length, used, limit)
        taken[span] = True
        used += int(sizes[span].sum())
        spans.append(span)
        sampled.append(length)
    return groups, spans, sampled


def spanbert(tokens: Sequence[str], rng: np.random.Generator, vocab: Vocab, rate: float = 0.15) -> SpanMaskResult:
    """SpanBERT: whole-word spans with Geometric(0.2) lengths (<= 10 words) until 15% of tokens.

    The 80/10/10 rule is decided once per *span* (all its tokens masked, all random, or all
    kept), as in the paper; the anchor is a uniformly drawn token, moved to its word's start.
    """
    groups, spans, sampled = _spanbert_select(tokens, rng, vocab.scheme, rate)
    inp = list(tokens)
    kinds = [SPECIAL if is_special(t) else NOT_SELECTED for t in tokens]
    targets: list[str | None] = [None] * len(tokens)
    positions: list[int | None] = [None] * len(tokens)
    ranges, bounds = [], []
    for span in sorted(spans):
        idx = [i for w in span for i in groups[w]]
        u = rng.random()
        for k, i in enumerate(idx):
            targets[i], positions[i] = tokens[i], k + 1
            if u < 0.8:
                inp[i], kinds[i] = vocab.mask, MASKED
            elif u < 0.9:
                inp[i], kinds[i] = vocab.replacements[int(rng.integers(len(vocab.replacements)))], RANDOM
            else:
                kinds[i] = KEPT
        ranges.append((idx[0], idx[-1] + 1))
        bounds.append((idx[0] - 1, idx[-1] + 1))  # may be [CLS]/[SEP] or outside (-1, T)
    return SpanMaskResult(
        "spanbert", tuple(tokens), tuple(inp), tuple(targets), tuple(kinds),
        tuple(ranges), tuple(bounds), tuple(positions), tuple(len(s) for s in sorted(spans)), tuple(sampled),
    )


def t5_noise_mask(n: int, rng: np.random.Generator, noise: float = T5_NOISE,
                  mean_span: float = T5_MEAN_SPAN) -> np.ndarray:
    """(n,) bool noise mask, T5's ``random_spans_noise_mask``.

    round(noise * n) noise tokens in round(noise_count / mean_span) spans; noise and non-noise
    lengths are random compositions, interleaved starting with non-noise, so the realised mean
    span length is noise_count / n_spans (3 for the defaults) in every draw.
    """
    if n < 2:
        return np.zeros(n, dtype=bool)
    n_noise = min(max(int(round(n * noise)), 1), n - 1)
    n_spans = min(max(int(round(n_noise / mean_span)), 1), n_noise, n - n_noise)
    noise_len = random_segmentation(n_noise, n_spans, rng)
    keep_len = random_segmentation(n - n_noise, n_spans, rng)
    mask = np.zeros(n, dtype=bool)
    pos = 0
    for keep, drop in zip(keep_len.tolist(), noise_len.tolist(), strict=True):
        mask[pos + keep: pos + keep + drop] = True
        pos += keep + drop
    return mask


def t5_span_corruption(tokens: Sequence[str], rng: np.random.Generator, vocab: Vocab,
                       noise: float = T5_NOISE, mean_span: float = T5_MEAN_SPAN) -> Seq2SeqResult:
    """T5: each noise span becomes one sentinel; the target is sentinel + span, ..., final sentinel.

    "Thank you for inviting me to your party last week." ->
    input "Thank you <X> me to your party <Y> week." target "<X> for inviting <Y> last <Z>".
    Special tokens (the final </s>) stay in the input and are appended to the target.
    """
    ok = eligible(tokens)
    noisy = np.zeros(len(tokens), dtype=bool)
    noisy[np.flatnonzero(ok)] = t5_noise_mask(int(ok.sum()), rng, noise, mean_span)
    inp: list[str] = []
    inp_kinds: list[str] = []
    target: list[str] = []
    spans: list[list[int]] = []  # [start, end) of each noise run
    for i, tok in enumerate(tokens):
        if not noisy[i]:
            inp.append(tok)
            inp_kinds.append(SPECIAL if is_special(tok) else "unchanged")
            continue
        if i == 0 or not noisy[i - 1]:  # a run of noise (split by specials) = one span
            s = sentinel(len(spans))
            inp.append(s)
            inp_kinds.append("sentinel")
            target.append(s)
            spans.append([i, i])
        target.append(tok)
        spans[-1][1] = i + 1
    target.append(sentinel(len(spans)))
    target.extend(t for t in tokens if is_special(t))  # T5 ends the target with </s> too
    kinds = tuple(SPECIAL if is_special(t) else ("masked" if noisy[i] else NOT_SELECTED) for i, t in enumerate(tokens))
    return Seq2SeqResult("t5", tuple(tokens), tuple(inp), tuple(target), kinds, tuple(inp_kinds),
                         tuple((s, e) for s, e in spans))


def t5_reconstruct(input_tokens: Sequence[str], target_tokens: Sequence[str]) -> list[str]:
    """Undo span corruption: put every sentinel's span from the target back into the input.

    >>> t5_reconstruct(["The", "<extra_id_0>", "sat", "</s>"], ["<extra_id_0>", "cat", "<extra_id_1>", "</s>"])
    ['The', 'cat', 'sat', '</s>']
    """
    fill: dict[str, list[str]] = {}
    current: str | None = None
    for tok in target_tokens:
        if tok.startswith("<extra_id_"):
            current = tok
            fill[current] = []
        elif current is not None and not is_special(tok):
            fill[current].append(tok)
    out: list[str] = []
    for tok in input_tokens:
        out.extend(fill.get(tok, [tok]) if tok.startswith("<extra_id_") else [tok])
    return out
