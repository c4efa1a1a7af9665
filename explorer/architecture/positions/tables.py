"""What the rows of a position table say about each other: cosine similarity, principal components, a random table.

A trained table (BERT's, GPT-2's, MiniLM's) is smooth: neighbouring positions have similar vectors and its first
principal components are slow waves along the positions. A random table of the same size (what the model starts
from) has neither: every row is nearly orthogonal to every other.

>>> import numpy as np
>>> sim = cosine_similarity(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]]))
>>> [round(float(x), 3) for x in sim[0]]
[1.0, 0.707, 0.0]
>>> coords, share = principal_components(random_table(64, 16, 0.02, seed=0), 3)
>>> coords.shape, bool(share.sum() < 1.0)
((64, 3), True)
"""

from __future__ import annotations

import numpy as np

__all__ = ["INIT_STD", "cosine_similarity", "neighbour_similarity", "principal_components", "random_table"]

INIT_STD = 0.02  # initializer_range of BERT, GPT-2 and most configs: how a table starts


def cosine_similarity(rows: np.ndarray) -> np.ndarray:
    """``(P, P)``: the cosine of the angle between every two rows of ``(P, d)`` (a zero row: 0 everywhere)."""
    x = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    unit = np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
    return unit @ unit.T


def neighbour_similarity(rows: np.ndarray, distances: np.ndarray) -> np.ndarray:
    """The mean cosine similarity of rows ``distance`` apart, for each distance (how smooth the table is)."""
    sim = cosine_similarity(rows)
    n = sim.shape[0]
    return np.array([float(np.mean(np.diagonal(sim, offset=int(d)))) if abs(int(d)) < n else np.nan
                     for d in distances])


def principal_components(table: np.ndarray, k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """(coordinates ``(P, k)`` of each row on the table's first ``k`` principal axes, the share of the variance
    each axis explains ``(k,)``), by SVD of the centred rows."""
    x = np.asarray(table, dtype=np.float64)
    centred = x - x.mean(axis=0, keepdims=True)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    k = min(k, s.shape[0])
    total = float((s ** 2).sum()) or 1.0
    return u[:, :k] * s[:k], (s[:k] ** 2) / total


def random_table(rows: int, width: int, std: float = INIT_STD, seed: int = 0) -> np.ndarray:
    """``(rows, width)`` drawn as transformers initialises an embedding: normal, mean 0, ``std``."""
    return np.random.default_rng(seed).normal(0.0, std, size=(rows, width))
