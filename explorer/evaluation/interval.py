"""Confidence intervals of an accuracy (Wilson's score interval) and of any statistic (a seeded bootstrap).

On a few dozen examples an accuracy moves by several points from one sample of examples to another; the interval
says how much. Wilson's interval (Wilson 1927) keeps within 0..1 and stays honest at 0 or n right answers, where
the normal approximation collapses to a point. The bootstrap (Efron 1979) resamples the examples with a fixed
seed, so the same results give the same interval; paired over the same examples, it bounds the difference of two
models' accuracies.

>>> [round(v, 4) for v in wilson(8, 10)]
[0.4902, 0.9433]
>>> wilson(0, 0)
(0.0, 1.0)
>>> low, high = bootstrap([1, 0, 1, 1, 0, 1, 1, 1], seed=0)
>>> 0.3 < low < 0.75 < high <= 1.0
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["CONFIDENCE", "Z", "bootstrap", "paired_difference", "wilson"]

CONFIDENCE = 0.95
Z = 1.959963984540054  # the normal quantile of 97.5%: a two-sided 95% interval
RESAMPLES = 2_000  # bootstrap resamples: the interval's ends move by well under a point between seeds


def wilson(correct: int, total: int, z: float = Z) -> tuple[float, float]:
    """Wilson's score interval of ``correct`` right answers out of ``total`` (0..1 when nothing was scored)."""
    if total <= 0:
        return 0.0, 1.0
    p = correct / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap(values: Sequence[float], seed: int = 0, resamples: int = RESAMPLES,
              confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (seeded: the same values give the same ends)."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return 0.0, 1.0
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)  # (R,)
    tail = (1 - confidence) / 2
    return float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail))


def paired_difference(a: Sequence[bool], b: Sequence[bool], seed: int = 0) -> tuple[float, float, float]:
    """Accuracy of ``a`` minus that of ``b`` on the same examples, with its paired bootstrap interval."""
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if diff.size == 0:
        return 0.0, 0.0, 0.0
    low, high = bootstrap(diff.tolist(), seed)
    return float(diff.mean()), low, high
