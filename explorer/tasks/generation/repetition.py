"""How repetitive a generated sequence becomes as it grows (degeneration of greedy and beam search).

Two measures over token ids, for every prefix length:

- ``repeated``: the share of n-grams (n=3 by default) that already occurred earlier in the
  sequence; 0 for fresh text, near 1 for a loop.
- ``distinct-2``: distinct bigrams / bigrams (Li et al. 2016); 1 for no repeated pair.

>>> repetition_curve([1, 2, 3, 1, 2, 3], n=3)[-1]
RepetitionPoint(length=6, repeated=0.25, distinct_2=0.6)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

__all__ = ["RepetitionPoint", "distinct_n", "repeated_share", "repetition_curve"]


@dataclass(frozen=True)
class RepetitionPoint:
    """Repetition measures of the first ``length`` generated tokens."""

    length: int
    repeated: float  # share of n-grams seen before (0..1)
    distinct_2: float  # distinct bigrams / bigrams (0..1)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _ngrams(ids: Sequence[int], n: int) -> list[tuple[int, ...]]:
    return [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]


def repeated_share(ids: Sequence[int], n: int = 3) -> float:
    """Share of the n-grams of ``ids`` that repeat an earlier one (0 when there are none)."""
    grams = _ngrams(ids, n)
    return (len(grams) - len(set(grams))) / len(grams) if grams else 0.0


def distinct_n(ids: Sequence[int], n: int = 2) -> float:
    """Distinct n-grams / n-grams (1 when there are none yet)."""
    grams = _ngrams(ids, n)
    return len(set(grams)) / len(grams) if grams else 1.0


def repetition_curve(ids: Sequence[int], n: int = 3) -> list[RepetitionPoint]:
    """Both measures for every prefix length 1..len(ids) (incremental: O(len))."""
    seen_n: set[tuple[int, ...]] = set()
    seen_2: set[tuple[int, ...]] = set()
    repeats = 0
    out = []
    for length in range(1, len(ids) + 1):
        if length >= n:
            gram = tuple(ids[length - n:length])
            repeats += gram in seen_n
            seen_n.add(gram)
        if length >= 2:
            seen_2.add(tuple(ids[length - 2:length]))
        grams_n, grams_2 = max(0, length - n + 1), max(0, length - 1)
        out.append(RepetitionPoint(length, round(repeats / grams_n, 6) if grams_n else 0.0,
                                   round(len(seen_2) / grams_2, 6) if grams_2 else 1.0))
    return out
