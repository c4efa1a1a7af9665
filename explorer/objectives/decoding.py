"""Causal language modelling (GPT) and decoding from a next-token probability table.

GPT is trained to predict token t+1 from tokens 1..t at *every* position at once (the
causal mask hides the future), so there is nothing to corrupt: the targets are the input
shifted by one. Generation then turns a next-token distribution into a choice: greedy
(argmax), sampling with a temperature (p ** (1/T), renormalised) and top-k (sample among
the k most likely only).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from explorer.core.errors import ExplorerError, shorten
from explorer.objectives.base import SPECIAL, MaskedLMResult, Vocab, _lists, is_special

__all__ = ["EXAMPLE_CONTEXT", "EXAMPLE_TABLE", "METHODS", "DecodingResult", "adjust", "bigram_table",
    "causal_lm", "continue_text", "decode", "generate", "table_from_rows"]

# "The cat sat on the ..." : a small, realistic next-token table for the page.
EXAMPLE_CONTEXT = "The cat sat on the"
EXAMPLE_TABLE: dict[str, float] = {
    "mat": 0.42, "floor": 0.21, "sofa": 0.12, "roof": 0.08, "bed": 0.07, "table": 0.05, "moon": 0.03, "banana": 0.02,
}
METHODS = ("greedy", "sample", "top-k")


def table_from_rows(tokens: Sequence[object], probs: Sequence[object]) -> dict[str, float]:
    """An edited table (two columns) as token -> probability; blank rows are skipped.

    Raises ExplorerError for no rows, repeated tokens or values that are not numbers.
    """
    table: dict[str, float] = {}
    for tok, p in zip(tokens, probs, strict=True):
        name = "" if tok is None else str(tok).strip()
        if not name or p is None or (isinstance(p, float) and np.isnan(p)):
            continue
        if name in table:
            raise ExplorerError(f"The token {shorten(name)!r} appears twice in the table: merge the two rows.")
        try:
            table[name] = float(p)  # type: ignore[arg-type]  # any cell value: float() says what is no number
        except (TypeError, ValueError):
            raise ExplorerError(f"The probability of {shorten(name)!r} is not a number: type e.g. 0.25.") from None
    if not table:
        raise ExplorerError("The table is empty: add at least one token with a probability.")
    return table


def causal_lm(tokens: Sequence[str], rng: np.random.Generator, vocab: Vocab) -> MaskedLMResult:
    """GPT CLM: the target at position t is token t+1 (None at the last position; rng unused)."""
    targets = (*tokens[1:], None) if tokens else ()
    kinds = tuple(SPECIAL if is_special(t) else ("predicts next" if i < len(tokens) - 1 else "last")
                  for i, t in enumerate(tokens))
    return MaskedLMResult("gpt-clm", tuple(tokens), tuple(tokens), targets, kinds)


def adjust(probs: np.ndarray, method: str, temperature: float = 1.0, top_k: int = 0) -> np.ndarray:
    """(V,) the distribution a decoding method actually draws from.

    greedy: one-hot on the argmax. sample: p ** (1/T) renormalised (softmax(logits / T)):
    T < 1 sharpens, T > 1 flattens. top-k: keep the k largest, renormalise, then temperature.
    """
    p = np.asarray(probs, dtype=float)
    if p.ndim != 1 or len(p) == 0 or (p < 0).any() or not np.isfinite(p).all() or p.sum() <= 0:
        raise ExplorerError("The probability table needs at least one row of non-negative numbers with a positive sum: "
                            "fix the values.")
    p = p / p.sum()
    if method == "greedy":
        return np.eye(len(p))[int(np.argmax(p))]
    if method not in METHODS:
        raise ExplorerError(f"unknown decoding method {shorten(method)!r}; choose from {', '.join(METHODS)}")
    if temperature <= 0:
        raise ExplorerError("Temperature must be above 0: use greedy decoding for the T -> 0 limit.")
    if method == "top-k":
        k = max(1, min(int(top_k), len(p)))
        keep = np.zeros(len(p), dtype=bool)
        keep[np.argsort(-p, kind="stable")[:k]] = True  # ties: the earlier token wins
        p = np.where(keep, p, 0.0)
    logp = np.log(np.where(p > 0, p, 1.0)) / temperature  # work in log space: p ** (1/T) underflows
    q = np.where(p > 0, np.exp(logp - logp[p > 0].max()), 0.0)
    return q / q.sum()


@dataclass(frozen=True)
class DecodingResult:
    """One decoding method on one next-token table of V candidates, sampled ``n`` times."""

    method: str
    temperature: float
    top_k: int
    tokens: tuple[str, ...]  # (V,)
    probs: tuple[float, ...]  # (V,) the model's distribution
    adjusted: tuple[float, ...]  # (V,) what the method draws from
    choice: str  # greedy's pick, or the first sample
    counts: tuple[int, ...]  # (V,) how often each token was drawn in n draws

    def to_dict(self) -> dict[str, object]:
        return _lists(asdict(self))


def decode(table: dict[str, float], method: str, rng: np.random.Generator,
           temperature: float = 1.0, top_k: int = 0, n: int = 1000) -> DecodingResult:
    """Apply a decoding method to ``table`` (token -> probability) and draw ``n`` tokens."""
    tokens = tuple(table)
    q = adjust(np.array([table[t] for t in tokens], dtype=float), method, temperature, top_k)
    draws = rng.choice(len(tokens), size=n, p=q) if n else np.zeros(0, dtype=int)
    counts = np.bincount(draws, minlength=len(tokens))
    choice = tokens[int(draws[0])] if n else tokens[int(np.argmax(q))]
    p = np.array([table[t] for t in tokens], dtype=float)
    return DecodingResult(method, float(temperature), int(top_k), tokens, tuple((p / p.sum()).tolist()),
                          tuple(q.tolist()), choice, tuple(int(c) for c in counts))


def bigram_table(tokens: Sequence[str]) -> dict[str, dict[str, float]]:
    """A tiny causal LM estimated from the text itself: P(next | previous) by counting."""
    pairs: defaultdict[str, Counter[str]] = defaultdict(Counter)
    body = [t for t in tokens if not is_special(t)]
    for prev, nxt in zip(body, body[1:], strict=False):
        pairs[prev][nxt] += 1
    return {prev: {t: c / sum(cnt.values()) for t, c in cnt.most_common()} for prev, cnt in pairs.items()}


def generate(table: dict[str, dict[str, float]], start: str, steps: int, method: str,
             rng: np.random.Generator, temperature: float = 1.0, top_k: int = 0) -> tuple[str, ...]:
    """Continue from ``start`` with a bigram table for ``steps`` tokens (stops at a dead end)."""
    out = [start]
    for _ in range(steps):
        options = table.get(out[-1])
        if not options:
            break
        q = adjust(np.array(list(options.values())), method, temperature, top_k)
        out.append(list(options)[int(rng.choice(len(q), p=q))])
    return tuple(out)


def continue_text(tokens: Sequence[str], steps: int, method: str, rng: np.random.Generator,
                  temperature: float = 1.0, top_k: int = 0) -> tuple[str, ...]:
    """The bigram model counted from ``tokens`` continues their first piece for ``steps`` tokens."""
    if not tokens:
        raise ExplorerError("Type some text: the bigram model is counted from it.")
    return generate(bigram_table(tokens), tokens[0], steps, method, rng, temperature, top_k)
