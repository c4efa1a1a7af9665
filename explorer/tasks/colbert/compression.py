"""ColBERTv2's residual codec: centroid id + b-bit residual per token vector, and what it saves.

Each document token vector is stored as the id of its nearest centroid (int32) plus its residual
(vector minus centroid) quantised to ``b`` bits per dimension; decoding adds the bucket values back
to the centroid. :func:`storage_ratio` is the one place that says how much smaller this is.

>>> bytes_per_token(128, 1), bytes_per_token(128, 2), fp16_bytes(128)
(20, 36, 256)
>>> round(storage_ratio(128, 1), 1), round(storage_ratio(128, 2), 1)
(12.8, 7.1)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from explorer.core.errors import ExplorerError
from explorer.tasks.colbert.kmeans import kmeans

__all__ = [
    "CODE_BYTES", "FP16_BYTES", "RATIO_NOTE", "SUPPORTED_BITS", "Codec", "Compressed", "bytes_per_token", "compress",
    "decompress", "fp16_bytes", "storage_ratio", "train_codec",
]

CODE_BYTES = 4  # ColBERTv2 stores each centroid id as int32
FP16_BYTES = 2  # ColBERT (v1) stores every dimension of a token vector in 16-bit floats
SUPPORTED_BITS = (1, 2, 4, 8)  # the paper uses 1 and 2; 4 and 8 show the trend
RATIO_NOTE = ("Ratio = bytes of an fp16 token vector / bytes stored per token (centroid id + residual). The "
              "centroid table and the rest of an index are not counted: the paper's 6-10x compares whole indexes.")


@dataclass(frozen=True, eq=False)
class Codec:
    """Centroids plus the per-bucket cut points and reconstruction values of the residuals."""

    centroids: torch.Tensor  # (k, D)
    cutoffs: torch.Tensor  # (2^b - 1,) bucket boundaries on residual values
    weights: torch.Tensor  # (2^b,) value each bucket decodes to
    bits: int


@dataclass(frozen=True, eq=False)
class Compressed:
    """Compressed token vectors: centroid id + packed b-bit residual codes per token."""

    codes: np.ndarray  # (N,) int32 centroid ids
    packed: np.ndarray  # (N, ceil(D * b / 8)) uint8
    dim: int
    bits: int


def train_codec(x: torch.Tensor, k: int, bits: int, seed: int = 0) -> Codec:
    """Fit centroids and residual buckets on x (N, D), as ColBERTv2 does on a sample of the index.

    Buckets are quantiles of all residual values, so each of the 2^b codes is used equally often;
    a bucket decodes to the median of its quantile range.
    """
    if bits not in SUPPORTED_BITS:
        raise ExplorerError(f"{bits} bits per dimension is not supported: use 1 or 2 (or 4, 8).")
    cent = kmeans(x, k, seed)
    resid = (x - cent[(x @ cent.T).argmax(dim=1)]).flatten().float()  # (N * D,)
    levels = 2**bits
    q = torch.arange(levels, dtype=torch.float32) / levels  # 0, 1/L, ...
    return Codec(cent, torch.quantile(resid, q[1:]), torch.quantile(resid, q + 0.5 / levels), bits)


def compress(x: torch.Tensor, codec: Codec) -> Compressed:
    """x (N, D) -> centroid ids (N,) and residual bucket codes packed b bits per dimension."""
    codes = (x @ codec.centroids.T).argmax(dim=1)  # (N,)
    resid = x - codec.centroids[codes]  # (N, D)
    buckets = torch.bucketize(resid, codec.cutoffs).numpy().astype(np.uint8)  # (N, D) in [0, 2^b)
    shifts = np.arange(codec.bits - 1, -1, -1, dtype=np.uint8)  # most significant bit first
    bitplanes = (buckets[..., None] >> shifts) & 1  # (N, D, b)
    packed = np.packbits(bitplanes.reshape(x.shape[0], -1), axis=1)  # (N, ceil(D*b/8))
    return Compressed(codes.numpy().astype(np.int32), packed, int(x.shape[1]), codec.bits)


def decompress(c: Compressed, codec: Codec) -> torch.Tensor:
    """Inverse of ``compress``: centroid + decoded residual, renormalised -> (N, D) unit vectors."""
    n = c.codes.shape[0]
    bitplanes = np.unpackbits(c.packed, axis=1, count=c.dim * c.bits).reshape(n, c.dim, c.bits)
    shifts = np.arange(c.bits - 1, -1, -1)
    buckets = (bitplanes.astype(np.int64) << shifts).sum(axis=-1)  # (N, D)
    resid = codec.weights[torch.from_numpy(buckets)]  # (N, D)
    return F.normalize(codec.centroids[torch.from_numpy(c.codes).long()] + resid, dim=1)


def bytes_per_token(dim: int, bits: int) -> int:
    """Stored bytes of one compressed token vector: int32 centroid id + D*b bits of residual."""
    return CODE_BYTES + math.ceil(dim * bits / 8)


def fp16_bytes(dim: int) -> int:
    """Stored bytes of one uncompressed ColBERT (v1) token vector: D 16-bit floats."""
    return FP16_BYTES * dim


def storage_ratio(dim: int, bits: int) -> float:
    """How many times smaller one stored token vector gets: ``fp16_bytes(D) / bytes_per_token(D, b)``.

    What it counts: per document token vector, ColBERT (v1) stores D fp16 numbers (256 bytes at
    D = 128) and ColBERTv2 a 4-byte centroid id plus D residual codes of b bits (20 bytes at b = 1,
    36 at b = 2), so at D = 128 the ratio is 12.8x (1 bit) and 7.1x (2 bits).
    What it leaves out: the centroid table (k x D fp16, paid once per index; reported apart as
    ``CompressionStudy.centroid_table_bytes``) and the rest of an index (inverted lists, document
    lengths). The ColBERTv2 paper's 6-10x smaller index for 1-2 bit residuals (Santhanam et al. 2022,
    abstract) compares whole indexes, so it sits below this per-vector ratio.
    """
    return fp16_bytes(dim) / bytes_per_token(dim, bits)
