"""Centroids for ColBERTv2's index: spherical k-means with k-means++ seeding, and the number of centroids.

ColBERTv2 clusters a sample of the collection's token vectors and stores each vector as the id of
its nearest centroid plus a small residual (:mod:`explorer.tasks.colbert.compression`).

>>> import torch
>>> x = torch.nn.functional.normalize(torch.tensor([[1.0, 0.1], [1.0, -0.1], [0.1, 1.0], [-0.1, 1.0]]), dim=1)
>>> cent = kmeans(x, 2, seed=0)  # (k, D) unit centroids
>>> sorted((x @ cent.T).argmax(dim=1).tolist()) == [0, 0, 1, 1]
True
>>> default_k(100), default_k(10**6)
(16, 8192)
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from explorer.core.errors import ExplorerError

__all__ = ["default_k", "kmeans"]


def default_k(n_tokens: int) -> int:
    """Number of centroids: ColBERTv2's 2^floor(log2(16 sqrt(N))), capped near N/4.

    The cap matters for demo-sized collections: with 100 tokens the paper's rule gives 128
    centroids, i.e. one per token, and compression would look free.
    """
    n = max(2, int(n_tokens))
    paper = 2 ** int(math.floor(math.log2(16 * math.sqrt(n))))
    cap = 2 ** int(math.floor(math.log2(max(2, n // 4))))
    return max(2, min(paper, cap))


def _plus_plus_init(x: torch.Tensor, k: int, gen: torch.Generator) -> torch.Tensor:
    """k-means++ seeding for cosine distance: x (N, D) -> k starting centroids (k, D).

    Each new seed is drawn with probability proportional to its squared distance from the nearest
    seed so far; plain random seeding often puts two seeds in one cluster and never recovers.
    """
    first = int(torch.randint(x.shape[0], (1,), generator=gen))
    cent = [x[first]]
    dist = (1 - x @ x[first]).clamp(min=0)  # (N,) cosine distance to the nearest seed
    for _ in range(1, k):
        weights = dist**2
        if float(weights.sum()) <= 0:  # all remaining points coincide with a seed
            nxt = int(torch.randint(x.shape[0], (1,), generator=gen))
        else:
            nxt = int(torch.multinomial(weights, 1, generator=gen))
        cent.append(x[nxt])
        dist = torch.minimum(dist, (1 - x @ x[nxt]).clamp(min=0))
    return torch.stack(cent).clone()


def kmeans(x: torch.Tensor, k: int, seed: int = 0, iters: int = 25) -> torch.Tensor:
    """Spherical k-means (cosine) of unit vectors x (N, D) -> unit centroids (k, D); seeded, deterministic.

    Cosine rather than Euclidean because ColBERT vectors are unit length and scored by dot product.
    """
    n = x.shape[0]
    if not 1 <= k <= n:
        raise ExplorerError(f"Cannot make {k} centroids from {n} token vectors: pick 1 to {n}.")
    gen = torch.Generator().manual_seed(seed)
    cent = _plus_plus_init(x, k, gen)
    assign = torch.full((n,), -1, dtype=torch.long)
    for _ in range(iters):
        sim = x @ cent.T  # (N, k)
        new = sim.argmax(dim=1)  # (N,)
        if torch.equal(new, assign):
            break
        assign = new
        sums = torch.zeros_like(cent).index_add_(0, assign, x)  # (k, D)
        counts = torch.bincount(assign, minlength=k)  # (k,)
        empty = counts == 0
        if empty.any():  # reseed empty clusters with the worst-fitting tokens
            worst = sim.max(dim=1).values.argsort()[: int(empty.sum())]
            sums[empty] = x[worst]
        cent = F.normalize(sums, dim=1)
    return cent
