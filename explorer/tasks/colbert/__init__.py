"""Late interaction (ColBERT) and ColBERTv2 residual compression.

ColBERT keeps one vector per token instead of one per sentence and scores a document by MaxSim.
ColBERTv2 stores each document token vector as its nearest centroid's id plus a 1-2 bit residual;
:func:`~explorer.tasks.colbert.compression.storage_ratio` says exactly what that saves (and what the
paper's 6-10x counts). One module per noun; the package names the entry points a page or command calls (the
encoder's ref and its load, ranking, MaxSim, the compression study, their results) and anything else is imported
from its module:

- :mod:`~explorer.tasks.colbert.encoder`: ColBERT checkpoint or labelled MiniLM stand-in -> token vectors.
- :mod:`~explorer.tasks.colbert.late`: MaxSim, ranking next to the bi-encoder's, Kendall tau, top-k overlap.
- :mod:`~explorer.tasks.colbert.kmeans`: spherical k-means centroids and their number.
- :mod:`~explorer.tasks.colbert.compression`: the residual codec, bytes per token, storage ratio.
- :mod:`~explorer.tasks.colbert.study`: compression of a collection, per bit width, vs exact scores.

>>> import torch
>>> from explorer.tasks.colbert import compression
>>> x = torch.nn.functional.normalize(torch.randn(64, 16, generator=torch.Generator().manual_seed(0)), dim=1)
>>> codec = compression.train_codec(x, k=4, bits=2)
>>> packed = compression.compress(x, codec)
>>> packed.packed.shape, compression.bytes_per_token(16, 2)  # (N, D*b/8) residual bytes; + 4-byte centroid id
((64, 4), 8)
>>> bool((compression.decompress(packed, codec) * x).sum(1).mean() > 0.7)
True
"""

from __future__ import annotations

from explorer.tasks.colbert.compression import RATIO_NOTE
from explorer.tasks.colbert.encoder import encoder_ref, load_encoder
from explorer.tasks.colbert.late import MaxSim, Ranking, maxsim_texts, rank
from explorer.tasks.colbert.study import CompressionStudy, compression_study

__all__ = ["CompressionStudy", "MaxSim", "RATIO_NOTE", "Ranking", "compression_study", "encoder_ref", "load_encoder",
           "maxsim_texts", "rank"]
