"""BART's noising functions (Lewis et al. 2019, fairseq ``DenoisingDataset``).

The decoder always reconstructs the *original* document, so every function returns the
original as ``target_tokens``; only the encoder input differs. Ratios follow the released
bart.large recipe: 30% of tokens are corrupted; infilling span lengths ~ Poisson(3).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from explorer.core.errors import ExplorerError, shorten
from explorer.objectives.base import (
    NOT_SELECTED,
    SENTENCE_END,
    SPECIAL,
    Seq2SeqResult,
    Vocab,
    bare,
    eligible,
    frame,
    is_special,
)

__all__ = ["NOISES", "compose", "document_rotation", "sentence_permutation", "text_infilling",
    "token_deletion", "token_masking"]

BART_RATIO, POISSON_LAMBDA = 0.3, 3.0


def _kinds(tokens: Sequence[str], hit: np.ndarray, label: str) -> tuple[str, ...]:
    return tuple(SPECIAL if is_special(t) else (label if hit[i] else NOT_SELECTED) for i, t in enumerate(tokens))


def _choose(tokens: Sequence[str], rng: np.random.Generator, ratio: float) -> np.ndarray:
    """(T,) bool: ceil(ratio * n) non-special tokens drawn uniformly without replacement."""
    ok = np.flatnonzero(eligible(tokens))
    hit = np.zeros(len(tokens), dtype=bool)
    hit[rng.choice(ok, size=min(len(ok), math.ceil(len(ok) * ratio)), replace=False)] = True
    return hit


def token_masking(tokens: Sequence[str], rng: np.random.Generator, vocab: Vocab,
                  ratio: float = BART_RATIO) -> Seq2SeqResult:
    """Token masking: random tokens become <mask> (BERT-style, but the decoder rewrites all)."""
    hit = _choose(tokens, rng, ratio)
    inp = tuple(vocab.mask if hit[i] else t for i, t in enumerate(tokens))
    kinds = _kinds(tokens, hit, "masked")
    input_kinds = tuple("mask" if k == "masked" else ("unchanged" if k == NOT_SELECTED else k) for k in kinds)
    return Seq2SeqResult("bart-mask", tuple(tokens), inp, tuple(tokens), kinds, input_kinds)


def token_deletion(tokens: Sequence[str], rng: np.random.Generator, vocab: Vocab,
                   ratio: float = BART_RATIO) -> Seq2SeqResult:
    """Token deletion: random tokens vanish, so the model must also decide *where* input is missing."""
    hit = _choose(tokens, rng, ratio)
    inp = tuple(t for i, t in enumerate(tokens) if not hit[i])
    input_kinds = tuple(SPECIAL if is_special(t) else "unchanged" for t in inp)
    return Seq2SeqResult("bart-delete", tuple(tokens), inp, tuple(tokens), _kinds(tokens, hit, "deleted"), input_kinds)


def _poisson_lengths(budget: int, rng: np.random.Generator, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Poisson(lam) span lengths drawn until they cover ``budget`` tokens.

    Returns (as drawn, fitted): the last length is cut so the fitted ones sum to ``budget``.
    Zero lengths are kept: they become pure insertions of a mask.
    """
    if budget <= 0:
        return np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    drawn = rng.poisson(lam, size=max(8, int(2 * budget / lam) + 8))
    while drawn.sum() < budget:
        drawn = np.concatenate([drawn, rng.poisson(lam, size=len(drawn))])
    last = int(np.searchsorted(np.cumsum(drawn), budget))  # first index reaching the budget
    drawn = drawn[: last + 1]
    fitted = drawn.copy()
    fitted[-1] -= int(drawn.sum()) - budget
    return drawn, fitted


def _place_spans(n: int, lengths: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, list[int]]:
    """Put spans of ``lengths`` (K,) into n tokens without touching each other.

    The n - sum(lengths) kept tokens leave n - sum + 1 gaps; every span takes a distinct gap
    (uniformly), so two spans are never merged into one mask. Returns the (n,) noise mask and
    the positions (in 0..n) where a zero-length span inserts a mask.
    """
    n_keep = n - int(lengths.sum())
    lengths = rng.permutation(lengths)[: n_keep + 1]  # more spans than gaps: only in tiny texts
    gaps = dict(zip(np.sort(rng.choice(n_keep + 1, size=len(lengths), replace=False)).tolist(),
                    lengths.tolist(), strict=True))
    noise, inserts, cursor = np.zeros(n, dtype=bool), [], 0
    for gap in range(n_keep + 1):
        if gap in gaps:
            if gaps[gap] == 0:
                inserts.append(cursor)
            noise[cursor: cursor + gaps[gap]] = True
            cursor += gaps[gap]
        cursor += 1  # the kept token after this gap
    return noise, inserts


def text_infilling(tokens: Sequence[str], rng: np.random.Generator, vocab: Vocab,
                   ratio: float = BART_RATIO, lam: float = POISSON_LAMBDA) -> Seq2SeqResult:
    """Text infilling: Poisson(3)-long spans covering 30% of tokens, each replaced by ONE <mask>.

    The model cannot see how many tokens a mask hides (0, 1, 2, ...): a zero-length span
    inserts a <mask> where nothing is missing.
    """
    ok = np.flatnonzero(eligible(tokens))
    drawn, fitted = _poisson_lengths(math.ceil(len(ok) * ratio), rng, lam)
    body_noise, inserts = _place_spans(len(ok), fitted, rng)
    noisy = np.zeros(len(tokens), dtype=bool)
    noisy[ok] = body_noise
    insert_at = {int(ok[b]) if b < len(ok) else len(tokens) for b in inserts}  # before token i
    inp, inp_kinds, spans = [], [], []
    for i in range(len(tokens) + 1):
        if i in insert_at:
            inp.append(vocab.mask)
            inp_kinds.append("inserted mask")
            spans.append((i, i))
        if i == len(tokens):
            break
        if noisy[i] and (i == 0 or not noisy[i - 1]):
            inp.append(vocab.mask)
            inp_kinds.append("mask")
            spans.append((i, i))
        if noisy[i]:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            inp.append(tokens[i])
            inp_kinds.append(SPECIAL if is_special(tokens[i]) else "unchanged")
    return Seq2SeqResult("bart-infill", tuple(tokens), tuple(inp), tuple(tokens), _kinds(tokens, noisy, "masked"),
                         tuple(inp_kinds), tuple(spans), tuple(int(x) for x in drawn))


def _split_sentences(body: Sequence[str]) -> list[list[str]]:
    """The body cut after every sentence-final token (a trailing fragment is a sentence too)."""
    out: list[list[str]] = [[]]
    for tok in body:
        out[-1].append(tok)
        if bare(tok) in SENTENCE_END:
            out.append([])
    return [s for s in out if s]


def sentence_permutation(tokens: Sequence[str], rng: np.random.Generator, vocab: Vocab) -> Seq2SeqResult:
    """Sentence permutation: the document's sentences (split at . ! ?) in a random order."""
    head, body, tail = frame(tokens)
    sents = _split_sentences(body)
    order = rng.permutation(len(sents)).tolist()
    moved = [tok for k in order for tok in sents[k]]
    inp_kinds = [SPECIAL] * len(head)
    for new, k in enumerate(order):
        inp_kinds += ["unchanged" if k == new else f"sentence {k + 1}"] * len(sents[k])
    inp_kinds += [SPECIAL] * len(tail)
    kinds = tuple(SPECIAL if is_special(t) else NOT_SELECTED for t in tokens)
    return Seq2SeqResult("bart-permute", tuple(tokens), tuple(head + moved + tail), tuple(tokens), kinds,
                         tuple(inp_kinds), detail="sentence order: " + ", ".join(str(k + 1) for k in order))


def document_rotation(tokens: Sequence[str], rng: np.random.Generator, vocab: Vocab) -> Seq2SeqResult:
    """Document rotation: the document starts at a random token (not the first) and wraps around;
    the model must find the true start."""
    head, body, tail = frame(tokens)
    r = int(rng.integers(1, len(body))) if len(body) > 1 else 0
    rotated = body[r:] + body[:r]
    inp_kinds = ([SPECIAL] * len(head) + ["new start" if k == 0 and r else "unchanged" for k in range(len(body))]
                 + [SPECIAL] * len(tail))
    kinds = tuple(SPECIAL if is_special(t) else NOT_SELECTED for t in tokens)
    return Seq2SeqResult("bart-rotate", tuple(tokens), tuple(head + rotated + tail), tuple(tokens), kinds,
                         tuple(inp_kinds), detail=f"rotated by {r} tokens")


NOISES: dict[str, Callable[..., Seq2SeqResult]] = {
    "mask": token_masking, "delete": token_deletion, "infill": text_infilling,
    "permute": sentence_permutation, "rotate": document_rotation,
}


def compose(tokens: Sequence[str], rng: np.random.Generator, vocab: Vocab,
            noises: Sequence[str] = ("permute", "infill")) -> Seq2SeqResult:
    """Several noisings in order, each on the previous one's output (default: BART's best,
    sentence permutation then text infilling). The target is still the original document."""
    current, steps, last = tuple(tokens), [], None
    for name in noises:
        if name not in NOISES:
            raise ExplorerError(f"unknown BART noise {shorten(name)!r}; choose from {', '.join(NOISES)}")
        last = NOISES[name](current, rng, vocab)
        current = last.input_tokens
        steps.append((name, current))
    inp_kinds = last.input_kinds if last else tuple(SPECIAL if is_special(t) else "unchanged" for t in tokens)
    kinds = tuple(SPECIAL if is_special(t) else NOT_SELECTED for t in tokens)
    return Seq2SeqResult("bart-compose", tuple(tokens), current, tuple(tokens), kinds, inp_kinds,
                         steps=tuple(steps), detail=" then ".join(noises))
