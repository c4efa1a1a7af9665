"""The defining statistics of a strategy over many seeded draws, next to their theory.

``draw_stats`` runs the very same strategy function ``n`` times (seeds derived from one
seed) on the same tokens and aggregates what the page plots and the tests check:
realised selection rate, the split of selected tokens by kind (80/10/10), span lengths
against the theoretical distribution, and class frequencies of sentence-level objectives.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from explorer.objectives import get_strategy, mlm, run, spans
from explorer.objectives.base import (
    P_MASK,
    P_RANDOM,
    MaskedLMResult,
    SentencePairResult,
    Seq2SeqResult,
    Vocab,
    _lists,
    eligible,
)
from explorer.objectives.electra import P_ORIGINAL

__all__ = ["EIGHTY_TEN_TEN", "HIT_KINDS", "DrawStats", "draw_stats", "expected_kinds", "expected_rate",
    "poisson_pmf", "t5_length_pmf"]

HIT_KINDS = frozenset({"masked", "random", "kept", "deleted", "replaced", "sampled = original", "shuffled"})


@dataclass(frozen=True)
class DrawStats:
    """Aggregates over ``n_draws`` draws on one token sequence of length T."""

    strategy: str
    n_draws: int
    n_tokens: int  # T
    n_eligible: int  # non-special tokens
    rate: float  # mean fraction of eligible tokens selected / corrupted per draw
    rate_std: float  # standard deviation of that fraction across draws
    expected_rate: float | None
    kind_counts: dict[str, int] = field(default_factory=dict)  # selected tokens by kind, all draws
    position_freq: tuple[float, ...] = ()  # (T,) fraction of draws that selected position i
    span_lengths: dict[int, int] = field(default_factory=dict)  # realised lengths
    sampled_lengths: dict[int, int] = field(default_factory=dict)  # lengths as drawn
    theory: dict[int, float] = field(default_factory=dict)  # theoretical pmf of the drawn lengths
    theory_mean: float | None = None
    labels: dict[str, int] = field(default_factory=dict)  # classes (sentence tasks) or arrangements
    span_unit: str = "tokens"

    def to_dict(self) -> dict[str, object]:
        d = _lists(asdict(self))
        for key, counts in (("span_lengths", self.span_lengths), ("sampled_lengths", self.sampled_lengths),
                            ("theory", self.theory)):
            d[key] = {str(k): v for k, v in sorted(counts.items())}
        return d


def t5_length_pmf(n_noise: int, n_spans: int) -> dict[int, float]:
    """P(span = l) when n_noise tokens are cut into n_spans positive parts uniformly:
    C(n_noise - l - 1, n_spans - 2) / C(n_noise - 1, n_spans - 1)."""
    if n_spans <= 1:
        return {n_noise: 1.0} if n_noise else {}
    total = math.comb(n_noise - 1, n_spans - 1)
    return {ln: math.comb(n_noise - ln - 1, n_spans - 2) / total for ln in range(1, n_noise - n_spans + 2)}


def poisson_pmf(lam: float, up_to: int) -> dict[int, float]:
    return {k: math.exp(-lam) * lam**k / math.factorial(k) for k in range(up_to + 1)}


def expected_rate(name: str, n: int) -> float | None:
    """The selection rate each strategy is built to realise on n eligible tokens.

    >>> expected_rate("bert", 20), expected_rate("bert", 0)
    (0.15, None)
    """
    if n == 0:
        return None
    fixed = {
        "bert": mlm.budget(n) / n, "electra": mlm.budget(n) / n, "wwm": mlm.budget(n) / n,
        "roberta": 0.15, "xlm-mlm": 0.15, "xlm-tlm": 0.15, "spanbert": math.ceil(0.15 * n) / n,
        "bart-mask": math.ceil(0.3 * n) / n, "bart-delete": math.ceil(0.3 * n) / n,
        "bart-infill": math.ceil(0.3 * n) / n,
    }
    if name == "structbert-word" and n >= 3:  # 5% of the n - 2 trigrams of one contiguous text
        return 3 * max(1, round(0.05 * (n - 2))) / n
    if name == "t5":
        return (min(max(round(0.15 * n), 1), n - 1) / n) if n >= 2 else 0.0
    return fixed.get(name)


def _theory(name: str, n: int) -> tuple[dict[int, float], float | None, str]:
    """Theoretical pmf of the drawn span lengths, its mean, and the unit of length."""
    if name == "spanbert":
        pmf = spans.spanbert_length_pmf()
        return {i + 1: float(p) for i, p in enumerate(pmf)}, float(np.dot(np.arange(1, 11), pmf)), "words"
    if name == "bart-infill":
        return poisson_pmf(3.0, 15), 3.0, "tokens"
    if name == "t5" and n >= 2:
        n_noise = min(max(round(0.15 * n), 1), n - 1)
        n_spans = min(max(round(n_noise / 3), 1), n_noise, n - n_noise)
        return t5_length_pmf(n_noise, n_spans), n_noise / n_spans, "tokens"
    return {}, None, "tokens"


def _hits(result: Any) -> list[bool]:
    """(T,) which original positions this draw selected."""
    if isinstance(result, MaskedLMResult):
        return [t is not None for t in result.targets]
    if isinstance(result, Seq2SeqResult):
        return [k in HIT_KINDS for k in result.kinds]
    return [False] * len(result.original_tokens)


def _lengths(result: Any) -> tuple[list[int], list[int]]:
    realised = list(getattr(result, "span_words", ()) or getattr(result, "span_lengths", ()))
    if isinstance(result, Seq2SeqResult) and result.strategy == "t5":
        return realised, realised  # T5 draws lengths directly (a random composition)
    return realised, list(getattr(result, "sampled_lengths", ()))


def draw_stats(name: str, tokens: Sequence[str], vocab: Vocab, seed: int, n_draws: int = 1000,
               **options: Any) -> DrawStats:
    """Run strategy ``name`` ``n_draws`` times (draw d uses seed (seed, d)) and aggregate.

    ``options`` go to the strategy function (e.g. ELECTRA's ``p_original``).
    """
    get_strategy(name)
    ok = eligible(tokens)
    n = int(ok.sum())
    hits = np.zeros((n_draws, len(tokens)), dtype=bool)  # (D, T)
    kinds: Counter[str] = Counter()
    labels: Counter[str] = Counter()  # classes or arrangements
    realised: Counter[int] = Counter()
    sampled: Counter[int] = Counter()
    for d in range(n_draws):
        r = run(name, tokens, seed, vocab, epoch=d, **options)
        hits[d] = _hits(r)
        if not isinstance(r, SentencePairResult):
            kinds.update(k for k, h in zip(r.kinds, hits[d], strict=True) if h)
        if isinstance(r, SentencePairResult):
            labels[r.label] += 1
        elif isinstance(r, Seq2SeqResult) and name in ("bart-permute", "bart-rotate"):  # arrangements: uniform
            labels[r.detail] += 1
        real, drawn = _lengths(r)
        realised.update(real)
        sampled.update(drawn)
    per_draw = hits[:, ok].mean(axis=1) if n else np.zeros(n_draws)
    theory, mean, unit = _theory(name, n)
    return DrawStats(
        name, n_draws, len(tokens), n, float(per_draw.mean()) if n_draws else 0.0,
        float(per_draw.std()) if n_draws else 0.0, expected_rate(name, n), dict(kinds),
        tuple(hits.mean(axis=0).tolist()) if n_draws else (), dict(realised), dict(sampled), theory, mean,
        dict(labels), unit,
    )


# Strategies whose selected tokens follow BERT's 80/10/10 replacement rule.
EIGHTY_TEN_TEN = ("bert", "wwm", "roberta", "xlm-mlm", "xlm-tlm", "spanbert")


def expected_kinds(name: str, options: dict[str, Any] | None = None) -> dict[str, float] | None:
    """The split of the selected tokens a strategy is built to realise, or None if it has none.

    >>> expected_kinds("bert")
    {'masked': 0.8, 'random': 0.1, 'kept': 0.1}
    """
    if name in EIGHTY_TEN_TEN:
        return {"masked": P_MASK, "random": P_RANDOM, "kept": round(1 - P_MASK - P_RANDOM, 10)}
    if name == "electra":  # the generator's hit rate sets the split (a uniform pick is almost never right)
        p = float((options or {}).get("p_original", P_ORIGINAL))
        return {"replaced": 1 - p, "sampled = original": p}
    return None
