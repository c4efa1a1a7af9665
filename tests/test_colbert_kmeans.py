"""explorer.tasks.colbert.kmeans: seeded spherical k-means and ColBERTv2's number of centroids."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from explorer.core.errors import ExplorerError
from explorer.tasks.colbert.kmeans import default_k, kmeans


def _clusters(n_per: int = 40, k: int = 4, dim: int = 16, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    centers = F.normalize(torch.randn(k, dim, generator=gen), dim=1)
    x = centers.repeat_interleave(n_per, 0) + 0.05 * torch.randn(k * n_per, dim, generator=gen)
    return F.normalize(x, dim=1), torch.arange(k).repeat_interleave(n_per)


def test_kmeans_is_seeded_and_recovers_separated_clusters() -> None:
    x, labels = _clusters()
    c1, c2 = kmeans(x, 4, seed=3), kmeans(x, 4, seed=3)
    torch.testing.assert_close(c1, c2)
    torch.testing.assert_close(c1.norm(dim=1), torch.ones(4))
    assign = (x @ c1.T).argmax(1)
    for lab in range(4):  # every true cluster maps to exactly one centroid
        assert assign[labels == lab].unique().numel() == 1
    assert assign.unique().numel() == 4


def test_kmeans_with_duplicate_points_keeps_every_centroid_finite() -> None:
    x = F.normalize(torch.ones(10, 4), dim=1)  # all points coincide: seeding cannot spread out
    cent = kmeans(x, 3)
    assert cent.shape == (3, 4) and torch.isfinite(cent).all()


def test_kmeans_refuses_more_centroids_than_points() -> None:
    x, _ = _clusters()
    with pytest.raises(ExplorerError, match="Cannot make 5 centroids from 3 token vectors"):
        kmeans(x[:3], 5)
    with pytest.raises(ExplorerError, match="centroids"):
        kmeans(x, 0)


def test_default_k_follows_the_paper_and_is_capped_for_small_collections() -> None:
    assert default_k(10**6) == 2 ** int(math.log2(16 * 1000))  # ColBERTv2: 2^floor(log2(16 sqrt(N)))
    assert default_k(100) == 16  # the paper's 128 would be one centroid per token: capped near N/4
    assert default_k(2) == 2 and default_k(0) == 2
