"""Late interaction (ColBERT) and ColBERTv2 residual compression.

ColBERT keeps one vector per token instead of one per sentence and scores a document by MaxSim.
ColBERTv2 stores each document token vector as its nearest centroid's id plus a 1-2 bit residual;
:func:`~explorer.tasks.colbert.compression.storage_ratio` says exactly what that saves (and what the
paper's 6-10x counts). One module per noun; this package re-exports the public API:

- :mod:`~explorer.tasks.colbert.encoder`: ColBERT checkpoint or labelled MiniLM stand-in -> token vectors.
- :mod:`~explorer.tasks.colbert.late`: MaxSim, ranking next to the bi-encoder's, Kendall tau, top-k overlap.
- :mod:`~explorer.tasks.colbert.kmeans`: spherical k-means centroids and their number.
- :mod:`~explorer.tasks.colbert.compression`: the residual codec, bytes per token, storage ratio.
- :mod:`~explorer.tasks.colbert.study`: compression of a collection, per bit width, vs exact scores.

>>> import torch
>>> from explorer.tasks import colbert
>>> x = torch.nn.functional.normalize(torch.randn(64, 16, generator=torch.Generator().manual_seed(0)), dim=1)
>>> codec = colbert.train_codec(x, k=4, bits=2)
>>> packed = colbert.compress(x, codec)
>>> packed.packed.shape, colbert.bytes_per_token(16, 2)  # (N, D*b/8) residual bytes; + 4-byte centroid id
((64, 4), 8)
>>> bool((colbert.decompress(packed, codec) * x).sum(1).mean() > 0.7)
True
"""

from __future__ import annotations

from explorer.tasks.colbert.compression import (
    CODE_BYTES,
    RATIO_NOTE,
    Codec,
    Compressed,
    bytes_per_token,
    compress,
    decompress,
    fp16_bytes,
    storage_ratio,
    train_codec,
)
from explorer.tasks.colbert.encoder import (
    COLBERT_KEYS,
    DOC_MARKER,
    DOC_MAXLEN,
    QUERY_MARKER,
    QUERY_MAXLEN,
    STAND_IN_NOTE,
    TokenEmbeddings,
    TokenEncoder,
    checkpoint_key,
    encode_collection,
    encode_tokens,
    encoder_ref,
    limits,
    load_encoder,
    make_encoder,
    read_projection,
    truncation_notices,
)
from explorer.tasks.colbert.kmeans import default_k, kmeans
from explorer.tasks.colbert.late import (
    MaxSim,
    RankedDoc,
    Ranking,
    kendall_tau,
    maxsim,
    maxsim_scores,
    maxsim_texts,
    rank,
    ranks,
    top_k_overlap,
)
from explorer.tasks.colbert.study import BitsReport, CompressionStudy, compression_study

__all__ = [
    "CODE_BYTES", "COLBERT_KEYS", "DOC_MARKER", "DOC_MAXLEN", "QUERY_MARKER", "QUERY_MAXLEN", "RATIO_NOTE",
    "STAND_IN_NOTE",
    "BitsReport", "Codec", "Compressed", "CompressionStudy", "MaxSim", "RankedDoc", "Ranking", "TokenEmbeddings",
    "TokenEncoder", "bytes_per_token", "checkpoint_key", "compress", "compression_study", "decompress",
    "default_k", "encode_collection", "encode_tokens", "encoder_ref", "fp16_bytes", "kendall_tau", "kmeans",
    "limits", "load_encoder", "make_encoder", "maxsim", "maxsim_scores", "maxsim_texts", "rank", "ranks",
    "read_projection", "storage_ratio", "top_k_overlap", "train_codec", "truncation_notices",
]
