"""A ColBERTv2 compression study on a small collection: storage and score change per bit width.

The documents' token vectors are clustered once per bit width, compressed, decompressed and scored
again by MaxSim; the query stays uncompressed (ColBERTv2 only compresses the index).

>>> from explorer.tasks.colbert.compression import storage_ratio
>>> r = BitsReport(bits=2, bytes_per_token=36, ratio_vs_fp16=round(storage_ratio(128, 2), 3),
...                mean_cosine=0.98, scores=(1.0,), max_abs_score_change=0.01, kendall_tau=1.0, top_k_overlap=1.0)
>>> r.ratio_vs_fp16
7.111
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

from explorer.runtime.placement import ran_on
from explorer.tasks import similarity
from explorer.tasks.colbert.compression import (
    FP16_BYTES,
    Codec,
    bytes_per_token,
    compress,
    decompress,
    storage_ratio,
    train_codec,
)
from explorer.tasks.colbert.encoder import TokenEncoder, encode_collection
from explorer.tasks.colbert.kmeans import default_k
from explorer.tasks.colbert.late import kendall_tau, maxsim_scores, top_k_overlap

__all__ = ["BitsReport", "CompressionStudy", "compression_study"]


@dataclass(frozen=True)
class BitsReport:
    """What b-bit compression costs: storage and how far MaxSim scores and rankings move."""

    bits: int
    bytes_per_token: int  # centroid id + packed residual (compression.bytes_per_token)
    ratio_vs_fp16: float  # compression.storage_ratio: per token vector, centroid table excluded
    mean_cosine: float  # original vs decompressed token vector (1 = perfect)
    scores: tuple[float, ...]  # (N,) MaxSim with decompressed document vectors
    max_abs_score_change: float
    kendall_tau: float  # compressed ranking vs exact ranking
    top_k_overlap: float


@dataclass(frozen=True)
class CompressionStudy:
    """ColBERTv2 compression of a small collection, for each number of bits."""

    encoder: str
    stand_in: bool
    untrained: bool
    query: str
    docs: tuple[str, ...]
    n_tokens: int  # document token vectors in the collection
    dim: int
    k: int  # centroids
    top_k: int
    centroid_table_bytes: int  # fp16 centroids, paid once per index
    exact_scores: tuple[float, ...]  # (N,) MaxSim with uncompressed vectors
    reports: tuple[BitsReport, ...]
    device: str = "cpu"  # what ran the token encoder
    device_name: str = "cpu"
    dtype: str = "float32"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _bits_report(q: torch.Tensor, docs: list[torch.Tensor], exact: torch.Tensor, codec: Codec,
                 top_k: int) -> BitsReport:
    """Compress every document's vectors with ``codec`` and compare scores with the exact ones."""
    flat = torch.cat(docs)  # (Ntok, D)
    restored = decompress(compress(flat, codec), codec)  # (Ntok, D)
    parts = list(torch.split(restored, [d.shape[0] for d in docs]))
    approx = maxsim_scores(q, parts)  # (N,)
    dim = int(flat.shape[1])
    return BitsReport(codec.bits, bytes_per_token(dim, codec.bits), round(storage_ratio(dim, codec.bits), 3),
                      round(float((flat * restored).sum(dim=1).mean()), 5),
                      tuple(round(float(s), 5) for s in approx.tolist()),
                      round(float((approx - exact).abs().max()), 5),
                      round(kendall_tau(exact.tolist(), approx.tolist()), 5),
                      round(top_k_overlap(exact.tolist(), approx.tolist(), top_k), 5))


def compression_study(enc: TokenEncoder, query: str, lines: list[str] | str, bits: tuple[int, ...] = (1, 2),
                      k: int | None = None, seed: int = 0, top_k: int = 3) -> CompressionStudy:
    """Train one codec per bit width on the documents' token vectors and report storage and score change.

    ``k`` centroids (None: :func:`~explorer.tasks.colbert.kmeans.default_k`); the query stays uncompressed.
    """
    clean = similarity.clean_sentences(lines)
    q, docs = encode_collection(enc, query, clean.sentences)
    vecs = [d.vectors for d in docs]
    flat = torch.cat(vecs)  # (Ntok, D)
    k = int(k or default_k(flat.shape[0]))
    exact = maxsim_scores(q.vectors, vecs)  # (N,)
    reports = tuple(_bits_report(q.vectors, vecs, exact, train_codec(flat, k, b, seed), top_k) for b in bits)
    dim = int(flat.shape[1])
    return CompressionStudy(enc.label, enc.stand_in, bool(getattr(enc.loaded, "untrained", False)), q.text,
                            clean.sentences, int(flat.shape[0]), dim, k, min(top_k, len(docs)),
                            k * dim * FP16_BYTES, tuple(round(float(s), 5) for s in exact.tolist()), reports,
                            **ran_on(enc.loaded))
