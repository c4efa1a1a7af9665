"""Spearman's rank correlation, tied values at their average rank (hand grades tie often), without torch.

Shared by the compression lab (a compressed model's pair similarities against the original's) and
Sentence-BERT's pooling study (cosines against hand grades, as STS papers report it).

>>> average_ranks([10.0, 30.0, 20.0, 30.0])
[0.0, 2.5, 1.0, 2.5]
>>> round(spearman([1.0, 2.0, 3.0], [10.0, 30.0, 20.0]), 6)
0.5
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["average_ranks", "spearman"]


def average_ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 0 in ascending order; values that tie share the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for i in order[start:end + 1]:
            ranks[i] = (start + end) / 2
        start = end + 1
    return ranks


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman rank correlation: Pearson's correlation of the ranks; 0.0 when either list is constant.

    >>> round(spearman([1.0, 2.0, 2.0], [1.0, 2.0, 3.0]), 4)
    0.866
    """
    ra, rb = average_ranks(a), average_ranks(b)
    ma, mb = math.fsum(ra) / len(ra), math.fsum(rb) / len(rb)
    da, db = [r - ma for r in ra], [r - mb for r in rb]
    denom = math.sqrt(math.fsum(x * x for x in da)) * math.sqrt(math.fsum(y * y for y in db))
    return math.fsum(x * y for x, y in zip(da, db, strict=True)) / denom if denom else 0.0
