"""explorer.tasks.colbert.compression: packed b-bit residuals, exact decoding, bytes and the one storage ratio."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from explorer.core.errors import ExplorerError
from explorer.tasks.colbert import compression as cc


def _clusters(n_per: int = 40, k: int = 4, dim: int = 16, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    centers = F.normalize(torch.randn(k, dim, generator=gen), dim=1)
    return F.normalize(centers.repeat_interleave(n_per, 0) + 0.05 * torch.randn(k * n_per, dim, generator=gen), dim=1)


@pytest.mark.parametrize("bits", [1, 2, 4])
def test_compress_packs_b_bits_and_decompresses_to_centroid_plus_bucket(bits: int) -> None:
    x = _clusters(dim=20)  # 20 * bits is not a multiple of 8 for bits=1: padding must not leak
    codec = cc.train_codec(x, 4, bits)
    comp = cc.compress(x, codec)
    assert comp.packed.dtype == np.uint8 and comp.packed.shape == (x.shape[0], math.ceil(20 * bits / 8))
    assert comp.codes.dtype == np.int32 and comp.codes.max() < 4
    assert codec.cutoffs.numel() == 2**bits - 1 and codec.weights.numel() == 2**bits
    # Decompression must equal: nearest centroid + the bucket value of each residual coordinate.
    resid = x - codec.centroids[torch.from_numpy(comp.codes).long()]
    expected = F.normalize(codec.centroids[torch.from_numpy(comp.codes).long()]
                           + codec.weights[torch.bucketize(resid, codec.cutoffs)], dim=1)
    torch.testing.assert_close(cc.decompress(comp, codec), expected)


def test_two_bits_reconstruct_better_than_one() -> None:
    gen = torch.Generator().manual_seed(0)
    x = F.normalize(torch.randn(300, 64, generator=gen), dim=1)
    cos = {}
    for bits in (1, 2):
        codec = cc.train_codec(x, 8, bits)
        cos[bits] = float((cc.decompress(cc.compress(x, codec), codec) * x).sum(1).mean())
    assert 0.5 < cos[1] < cos[2] < 1.0


def test_buckets_are_used_equally_often() -> None:
    x = F.normalize(torch.randn(400, 32, generator=torch.Generator().manual_seed(1)), dim=1)
    codec = cc.train_codec(x, 8, 2)
    resid = x - codec.centroids[(x @ codec.centroids.T).argmax(1)]
    counts = torch.bincount(torch.bucketize(resid.flatten(), codec.cutoffs), minlength=4)
    assert (counts - counts.float().mean()).abs().max() <= 2  # quantile cut points


def test_unsupported_bit_widths_are_refused() -> None:
    with pytest.raises(ExplorerError, match="3 bits per dimension"):
        cc.train_codec(_clusters(), 4, 3)


def test_storage_matches_the_colbertv2_paper() -> None:
    # ColBERTv2 (Santhanam et al. 2022): 128-d vectors take 20 (1-bit) or 36 (2-bit) bytes vs 256 in fp16.
    assert cc.bytes_per_token(128, 1) == 20 and cc.bytes_per_token(128, 2) == 36
    assert cc.fp16_bytes(128) == 256


def test_storage_ratio_is_fp16_bytes_over_stored_bytes() -> None:
    assert cc.storage_ratio(128, 1) == 256 / 20 and cc.storage_ratio(128, 2) == 256 / 36
    # Per vector it is above the paper's whole-index 6-10x at 1 bit, and inside it at 2 bits.
    assert cc.storage_ratio(128, 1) > 10 and 6 < cc.storage_ratio(128, 2) < 10
    assert cc.storage_ratio(384, 1) == 768 / 52


def test_the_ratio_note_says_what_is_left_out() -> None:
    assert "centroid table" in cc.RATIO_NOTE and "6-10x" in cc.RATIO_NOTE
